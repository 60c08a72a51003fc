"""Build the genuine development set of issue 34 from mirrored public repositories.

The set is listed in ``experiments/text_quality_set.json`` (the manifest, committed): for each
opinion its repository, path and commit, its court, and the format it is read in. This script
takes the listed files out of local bare mirrors of those repositories (``git show
COMMIT:PATH``; the mirrors are made beforehand, e.g. by a ``git clone --mirror`` of each
repository into ``MIRRORS/OWNER+NAME/repo``) and lays each opinion out under ``OUT/<id>/`` as
one folder per *route*, a form ``statinterp ingest`` reads::

    OUT/<id>/pdf/<id>.pdf              the court's PDF (format pdf)
    OUT/<id>/text/<id>.txt             a plain-text opinion (format text; format dataset-case: the
                                       whole text of one case of a statutory-interpretation
                                       data-set zip, its case_id named in the manifest)
    OUT/<id>/cap/REPORTER/VOL/cases/0001-01.json + html/0001-01.html
                                       a CAP case: its HTML as in CAP's static release, with a
                                       case JSON made from the fixture's data.yml entry
    OUT/<id>/cl-FIELD/<id>.json        a CourtListener per-opinion record whose only text is FIELD
                                       (html, plain_text, html_lawbox, html_with_citations)

Routes derived here, so that one opinion can be read the ways CourtListener stores it: for each
PDF, ``cl-plain_text`` is the text CourtListener's extractor (freelawproject/doctor,
``doctor/tasks.py``) makes of it, ``pdftotext -layout -enc UTF-8``; for each plain text (from a
PDF or a text file), ``cl-html_with_citations`` is that text as CourtListener's citation step
(``cl/citations/annotate_citations.py``, unmatched citations) stores it: HTML-escaped in
``<pre class="inline">`` with each citation eyecite finds closed off as
``</pre><span class="citation no-link">…</span><pre class="inline">``. A CourtListener record
that holds several text fields gets one route per field.

Run from the project root (needs ``git`` and, for the PDF routes, poppler's ``pdftotext``)::

    python -m experiments.text_quality_set --mirrors MIRRORS --out SET

``MIRRORS``: a folder of bare git mirrors of the manifest's repositories (``OWNER+NAME/``).

Writes ``OUT/set.json``: the manifest with each entry's routes (folder names) added, and the
versions of the tools used.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

MANIFEST = Path(__file__).with_name("text_quality_set.json")
#: CourtListener's text fields that get a route of their own (CourtListener's order of preference).
CL_FIELDS = ("html_with_citations", "html_lawbox", "html", "plain_text")


def load_manifest(path: Path = MANIFEST) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def git_show(mirrors: Path, repo: str, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in the mirror of ``repo`` (``OWNER+NAME/repo``)."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if (git_dir / ".git").is_dir():  # a mirror with a work tree
        git_dir = git_dir / ".git"
    if not git_dir.is_dir():
        raise SystemExit(f"error: {git_dir}: no mirror of {repo} (fetch it first)")
    done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {repo} {commit[:10]}:{path}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def pdftotext_layout(pdf: Path) -> str:
    """The text CourtListener's extractor makes of a PDF (doctor: ``pdftotext -layout -enc UTF-8``)."""
    done = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"], capture_output=True)
    return done.stdout.decode("utf-8", errors="replace")


def html_with_citations(plain_text: str) -> str:
    """``plain_text`` as CourtListener's citation step stores it when no citation is matched to a
    case: escaped in ``<pre class="inline">``, each citation in a ``<span>`` between two ``<pre>``."""
    from eyecite import annotate_citations, get_citations
    from eyecite.models import FullCaseCitation, IdCitation, ShortCaseCitation, SupraCitation

    kinds = (FullCaseCitation, ShortCaseCitation, SupraCitation, IdCitation)
    annotations = [(c.span(), '</pre><span class="citation no-link">', '</span><pre class="inline">')
                   for c in get_citations(plain_text) if isinstance(c, kinds)]
    source = f'<pre class="inline">{html.escape(plain_text)}</pre>'
    if not annotations:
        return source
    return annotate_citations(plain_text, annotations, source_text=source)


def _cl_record(entry: dict, number: int, field: str, text: str, case_name: str = "") -> dict:
    return {"id": number, "cluster_id": number, "case_name": case_name or entry["id"], "court": entry["court"],
            "type": "010combined", field: text}


def _write_json(path: Path, obj: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")


def _cap_metadata(mirrors: Path, entry: dict, cache: dict) -> dict:
    """The data.yml entry of a CAP fixture case (capstone's fastcase test data)."""
    import yaml

    key = ("yml", entry["commit"])
    if key not in cache:
        raw = git_show(mirrors, entry["repo"], entry["commit"], "capstone/test_data/fastcase/data.yml")
        cache[key] = {k: c for vol in yaml.safe_load(raw).values() for k, c in vol["cases"].items()}
    stem = entry["path"].split("capstone/test_data/fastcase/", 1)[1].rsplit(".", 1)[0]
    return cache[key][f"FC:{stem}.xml"]


def _cap_case_json(entry: dict, meta: dict, html_text: str) -> dict:
    """A CAP per-case JSON for the HTML (its opinions' types from the HTML's articles)."""
    types = re.findall(r'<article class="opinion" data-type="([^"]*)"', html_text) or ["majority"]
    return {
        "id": zlib.crc32(entry["id"].encode()), "name": meta["name"], "name_abbreviation": meta["name_abbreviation"],
        "decision_date": meta.get("decision_date_original", ""), "docket_number": meta.get("docket_number", ""),
        "first_page": meta.get("first_page", ""), "last_page": meta.get("last_page", ""),
        "citations": [{"type": c["type"], "cite": c["cite"]} for c in meta.get("citations", [])],
        "court": {"name": meta["court"]["name"], "name_abbreviation": meta["court"].get("name_abbreviation", "")},
        "jurisdiction": {"name": meta.get("jurisdiction", {}).get("name", "")},
        "casebody": {"judges": [], "parties": [], "attorneys": [], "head_matter": "",
                     "opinions": [{"type": t, "author": None, "text": "(text in the HTML)"} for t in types]},
    }


def build(manifest: dict, mirrors: Path, out: Path) -> dict:
    """Lay out every entry of ``manifest`` under ``out``; returns the manifest with routes added."""
    cache: dict = {}
    entries = []
    for number, entry in enumerate(manifest["entries"], 1):
        raw = git_show(mirrors, entry["repo"], entry["commit"], entry["path"])
        home = out / entry["id"]
        if home.exists():
            shutil.rmtree(home)
        routes: list[str] = []
        fmt = entry["format"]
        plain = None
        if fmt == "pdf":
            pdf = home / "pdf" / f"{entry['id']}.pdf"
            pdf.parent.mkdir(parents=True)
            pdf.write_bytes(raw)
            routes.append("pdf")
            plain = pdftotext_layout(pdf)
            _write_json(home / "cl-plain_text" / f"{entry['id']}.json", _cl_record(entry, number, "plain_text", plain))
            routes.append("cl-plain_text")
        elif fmt == "text":
            txt = home / "text" / f"{entry['id']}.txt"
            txt.parent.mkdir(parents=True)
            txt.write_bytes(raw)
            routes.append("text")
            plain = raw.decode("utf-8", errors="replace")
        elif fmt == "courtlistener-html":
            _write_json(home / "cl-html" / f"{entry['id']}.json",
                        _cl_record(entry, number, "html", raw.decode("utf-8", errors="replace")))
            routes.append("cl-html")
        elif fmt == "courtlistener-tar":
            record = _opinion_from_tars(raw)
            for field in CL_FIELDS:
                if isinstance(record.get(field), str) and record[field].strip():
                    _write_json(home / f"cl-{field}" / f"{entry['id']}.json",
                                _cl_record(entry, number, field, record[field]))
                    routes.append(f"cl-{field}")
        elif fmt == "dataset-case":
            txt = home / "text" / f"{entry['id']}.txt"
            txt.parent.mkdir(parents=True)
            plain = _dataset_case_text(raw, entry)
            txt.write_text(plain, encoding="utf-8")
            routes.append("text")
        elif fmt == "cap-html":
            text = raw.decode("utf-8")
            meta = _cap_metadata(mirrors, entry, cache)
            volume = home / "cap" / meta["reporter"]["short_name"].replace(".", "") / entry["path"].split("/")[-2]
            _write_json(volume / "cases" / "0001-01.json", _cap_case_json(entry, meta, text))
            (volume / "html").mkdir(parents=True)
            (volume / "html" / "0001-01.html").write_text(text, encoding="utf-8")
            routes.append("cap")
        else:
            raise SystemExit(f"error: {MANIFEST.name}: entry {entry['id']!r}: field 'format': unknown {fmt!r}")
        if plain is not None:
            _write_json(home / "cl-html_with_citations" / f"{entry['id']}.json",
                        _cl_record(entry, number, "html_with_citations", html_with_citations(plain)))
            routes.append("cl-html_with_citations")
        entries.append({**entry, "routes": routes})
        print(f"{entry['id']}: {', '.join(routes)}", file=sys.stderr)
    return {**manifest, "entries": entries, "tools": tool_versions()}


def _dataset_case_text(raw: bytes, entry: dict) -> str:
    """The whole text of the case ``entry["case_id"]`` of a statutory-interpretation data-set zip
    (its ``*-case.json`` record's ``text``: CAP's text of the case, head matter, opinions and
    their footnotes, one paragraph a line)."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        name = next(n for n in zf.namelist() if n.endswith("-case.json"))
        cases = json.loads(zf.read(name))
    if entry.get("case_id") not in cases:
        raise SystemExit(f"error: {entry['path']}: no case {entry.get('case_id')!r} (entry {entry['id']!r})")
    return cases[entry["case_id"]]["text"]


def _opinion_from_tars(raw: bytes) -> dict:
    """The one opinion JSON inside capstone's CourtListener test tar (a tar of ``*.tar.gz``)."""
    with tarfile.open(fileobj=io.BytesIO(raw)) as outer:
        for member in outer.getmembers():
            inner = outer.extractfile(member)
            if inner is None:
                continue
            with tarfile.open(fileobj=io.BytesIO(inner.read()), mode="r:gz") as tar:
                for m in tar.getmembers():
                    f = tar.extractfile(m)
                    if f is not None and m.name.endswith(".json"):
                        return json.loads(f.read())
    raise SystemExit("error: no opinion JSON in the CourtListener tar")


def tool_versions() -> dict[str, str]:
    from importlib.metadata import version

    done = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True)
    poppler = (done.stderr or done.stdout).splitlines()[0] if (done.stderr or done.stdout) else "?"
    return {"pdftotext": poppler, "eyecite": version("eyecite")}


def build_command(argv: list[str] | None = None) -> int:
    """The command line (no report: :mod:`experiments.text_quality` writes that)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, type=Path, help="folder of bare mirrors OWNER+NAME/repo")
    ap.add_argument("--out", required=True, type=Path, help="folder to write the set into")
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    args = ap.parse_args(argv)
    done = build(load_manifest(args.manifest), args.mirrors, args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    _write_json(args.out / "set.json", done)
    print(f"{len(done['entries'])} opinions written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(build_command())
