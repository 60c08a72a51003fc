"""CourtListener bulk files: ingest throughput and memory of the join, on invented files.

    python -m benchmarks.courtlistener_bulk --workdir WORK [--sizes 1000,10000]

For each size N, invented bulk files in CourtListener's published form are written to WORK
(:func:`write_invented`: PostgreSQL's CSV dialect, bz2, the real column lists): N clusters with
1-3 opinions each (HTML in ``html_with_citations`` with quotes and backslashes, or
``plain_text``), and companions three times as large as the opinions need (clusters, dockets,
citations of clusters no opinion names, as in the real files, where the opinions file is one of
many), plus the courts. Every measured run is a fresh process reporting wall and CPU time and its
own peak memory (VmHWM), one core:

* ``read``: ``read_partition`` over the opinions file and its companions (the join alone);
* ``store``: ``ingest(..., statistics=False, citations=False)``: read, join, parse, store, FTS5;
* ``split`` / ``split-plain``: the split pass of ``ingest --engine dask``
  (:func:`~statinterp.sources.courtlistener.split_bulk`, ``--split-parts`` parts, gzip
  level 1 / plain JSON lines), after decompressing every input file alone (what of the pass is
  bz2), then reading the parts one after another (what the workers do between them).

Memory should not grow with N (the join is on disk). The analysis (``statinterp ingest``'s
statistics) is the same for every source format and is measured by ``benchmarks.ingest``.
Results go to WORK/courtlistener_bulk.json and the section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.ingest import _vm_hwm_mb
from benchmarks.results_file import CL_BULK_HEADING, shown_command, write_section

DATE = "2030-01-01"
OPINION_COLUMNS = ["id", "date_created", "date_modified", "author_str", "per_curiam", "joined_by_str", "type", "sha1",
                   "page_count", "download_url", "local_path", "plain_text", "html", "html_lawbox", "html_columbia",
                   "html_anon_2020", "xml_harvard", "xml_scan", "html_with_citations", "extracted_by_ocr",
                   "author_id", "cluster_id"]
CLUSTER_COLUMNS = ["id", "date_created", "date_modified", "judges", "date_filed", "date_filed_is_approximate",
                   "slug", "case_name_short", "case_name", "case_name_full", "source", "attorneys",
                   "precedential_status", "blocked", "docket_id"]
DOCKET_COLUMNS = ["id", "date_created", "date_modified", "source", "case_name", "docket_number", "court_id"]
COURT_COLUMNS = ["id", "full_name", "short_name", "jurisdiction", "citation_string"]
CITATION_COLUMNS = ["id", "volume", "reporter", "page", "type", "cluster_id", "date_created", "date_modified"]

_WORDS = ("court statute vehicle motor defendant plaintiff appeal judgment evidence contract insurer policy "
          "coverage section provision meaning term ordinary legislature intent injury negligence trial jury "
          "verdict reversed affirmed remanded holding dissent concurrence record hearing").split()
_COURTS = [("invctapp", "Court of Appeals of Invented State", "SA"), ("invsup", "Supreme Court of Invented State", "S"),
           ("invd", "District Court, D. Invented", "FD")]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 24))]
    return " ".join(words).capitalize() + rng.choice([".", '; "quoted".', " (see \\ note)."])


def _paragraphs(rng: random.Random) -> list[str]:
    return [" ".join(_sentence(rng) for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(6, 30))]


def write_invented(folder: Path, n_clusters: int, seed: int = 0, extra: int = 2) -> dict:
    """Invented bulk files for ``n_clusters`` clusters with opinions (and ``extra`` times as many
    clusters, dockets and citations no opinion names); returns counts and sizes."""
    from statinterp.sources.courtlistener import write_bulk_csv

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = "2030-01-01 00:00:00+00"
    total = n_clusters * (1 + extra)
    with_opinions = set(rng.sample(range(1, total + 1), n_clusters))

    def opinions():
        oid = 0
        for cid in sorted(with_opinions):
            for k, kind in enumerate(["020lead", "030concurrence", "040dissent"][:rng.choice([1, 1, 2, 3])]):
                oid += 1
                paras = _paragraphs(rng)
                html = rng.random() < 0.7
                yield {"id": oid, "date_created": stamp, "date_modified": stamp, "author_str": f"Judge {k}",
                       "per_curiam": False, "joined_by_str": "", "type": kind, "sha1": f"{oid:040x}",
                       "plain_text": "" if html else "\n\n".join(paras), "html": "", "html_lawbox": "",
                       "html_columbia": "", "html_anon_2020": "", "xml_harvard": "",
                       "html_with_citations": "".join(f'<p id="p{i}">{p}</p>\n' for i, p in enumerate(paras))
                       if html else "", "extracted_by_ocr": False, "cluster_id": cid}

    counts = {"opinions": write_bulk_csv(folder / f"opinions-{DATE}.csv.bz2", OPINION_COLUMNS, opinions())}
    counts["clusters"] = write_bulk_csv(folder / f"opinion-clusters-{DATE}.csv.bz2", CLUSTER_COLUMNS, (
        {"id": c, "date_created": stamp, "date_modified": stamp, "judges": "A, B, C",
         "date_filed": f"{1950 + c % 70}-0{1 + c % 9}-1{c % 10}", "date_filed_is_approximate": False,
         "slug": f"case-{c}", "case_name": f'Invented "{c}" v. State', "case_name_full": f"Invented {c} v. The State",
         "source": "C", "attorneys": "", "precedential_status": "Published", "blocked": False, "docket_id": 10 * c}
        for c in range(1, total + 1)))
    counts["dockets"] = write_bulk_csv(folder / f"dockets-{DATE}.csv.bz2", DOCKET_COLUMNS, (
        {"id": 10 * c, "date_created": stamp, "date_modified": stamp, "source": 1, "case_name": f"Invented {c}",
         "docket_number": f"No. {c}-{c % 97}", "court_id": _COURTS[c % len(_COURTS)][0]} for c in range(1, total + 1)))
    counts["courts"] = write_bulk_csv(folder / f"courts-{DATE}.csv.bz2", COURT_COLUMNS, (
        {"id": cid, "full_name": name, "short_name": name, "jurisdiction": j, "citation_string": cid}
        for cid, name, j in _COURTS))
    counts["citations"] = write_bulk_csv(folder / f"citations-{DATE}.csv.bz2", CITATION_COLUMNS, (
        {"id": 2 * c + k, "volume": str(c % 900 + 1), "reporter": ["Inv.", "Inv. Reg."][k], "page": str(c % 997 + 1),
         "type": [2, 3][k], "cluster_id": c, "date_created": stamp, "date_modified": stamp}
        for c in range(1, total + 1) for k in range(2)))
    counts["bytes"] = sum(f.stat().st_size for f in folder.glob(f"*-{DATE}.csv.bz2"))
    counts["clusters_with_opinions"] = n_clusters
    return counts


def child(argv: list[str]) -> None:
    mode, source, collection = argv[0], argv[1], argv[2] if len(argv) > 2 else None
    from statinterp.collection.ingest import ingest
    from statinterp.sources import discover, read_partition
    from statinterp.sources.records import CaseRecord

    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    if mode == "read":
        cases = sum(isinstance(r, CaseRecord) for p in discover([source]) for r in read_partition(p))
        result: dict = {"cases_read": cases}
    elif mode.startswith("split"):
        result = split_run(source, Path(str(collection)), int(argv[3]), 0 if mode == "split-plain" else 1)
    else:
        result = ingest([source], collection, statistics=False, citations=False).as_dict()
    result.update(mode=mode, wall=time.perf_counter() - start, cpu=time.process_time() - cpu, peak_mb=_vm_hwm_mb(),
                  load=load)
    print("RESULT " + json.dumps(result), flush=True)


def split_run(source: str, spool: Path, parts: int, compresslevel: int) -> dict:
    """The split pass, timed after decompressing its input alone, then its parts read one by one."""
    import bz2

    from statinterp.sources import discover, read_partition
    from statinterp.sources.courtlistener import split_bulk
    from statinterp.sources.records import CaseRecord

    (whole,) = discover([source])
    cpu, raw = time.process_time(), 0
    for f in (whole.path, *whole.companions):
        with bz2.open(f, "rb") as fh:
            while chunk := fh.read(1 << 20):
                raw += len(chunk)
    bz2_cpu = time.process_time() - cpu
    cpu = time.process_time()
    done = split_bulk(whole, spool / "0", parts, compresslevel)
    split_cpu = time.process_time() - cpu
    spool_bytes = sum(f.stat().st_size for f in spool.rglob("*") if f.is_file())
    part_cpu, cases = [], 0
    for p in done.parts:
        cpu = time.process_time()
        cases += sum(isinstance(r, CaseRecord) for r in read_partition(p))
        part_cpu.append(time.process_time() - cpu)
    shutil.rmtree(spool)
    return {"cases_read": cases, "parts": len(done.parts), "compresslevel": compresslevel, "bz2_cpu": bz2_cpu,
            "decompressed_bytes": raw, "split_cpu": split_cpu, "spool_bytes": spool_bytes,
            "parts_cpu": sum(part_cpu), "largest_part_cpu": max(part_cpu)}


def run_child(mode: str, source: Path, collection: Path | None = None, parts: int = 32) -> dict:
    if collection is not None and collection.exists():
        shutil.rmtree(collection)
    cmd = [sys.executable, "-m", "benchmarks.courtlistener_bulk", "child", mode, str(source)]
    cmd += [str(collection), str(parts)] if collection is not None else []
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = json.loads(next(x for x in out.splitlines() if x.startswith("RESULT "))[len("RESULT "):])
    print(f"  {mode:6s} {source.parent.name}: {res['wall']:.1f} s wall, {res['cpu']:.1f} s CPU, "
          f"{res['peak_mb']:.0f} MB", file=sys.stderr, flush=True)
    return res


def markdown(res: dict) -> str:
    lines = [CL_BULK_HEADING, "",
             f"`{res['command']}` ({res['date']}; {res['cpu']}, {res['cores']} cores shared with other work, one "
             f"process per run; Python {res['python']}, SQLite {res['sqlite']}). Invented files in CourtListener's "
             "published form (PostgreSQL's CSV dialect, bz2; `benchmarks/courtlistener_bulk.py`, `write_invented`), "
             "companions three times as large as the opinions need. `read`: the join alone (`read_partition`); "
             "`store`: `ingest(..., statistics=False, citations=False)` (without the analysis, which is the same "
             "for every format: see the Ingest section).", "",
             "| clusters | opinions | bz2 input | mode | wall s | CPU s | clusters/CPU s | input MB/CPU s | peak MB | "
             "load |", "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for size in res["sizes"]:
        files = size["files"]
        for run in (r for r in size["runs"] if not r["mode"].startswith("split")):
            lines.append(f"| {files['clusters_with_opinions']:,} | {files['opinions']:,} | "
                         f"{files['bytes'] / 1e6:.1f} MB | {run['mode']} | {run['wall']:.1f} | {run['cpu']:.1f} | "
                         f"{files['clusters_with_opinions'] / max(run['cpu'], 1e-9):.0f} | "
                         f"{files['bytes'] / 1e6 / max(run['cpu'], 1e-9):.2f} | {run['peak_mb']:.0f} | "
                         f"{run.get('load', float('nan')):.1f} |")
    lines += split_markdown(res)
    peaks = {run["mode"]: [] for s in res["sizes"] for run in s["runs"]}
    for s in res["sizes"]:
        for run in s["runs"]:
            peaks[run["mode"]].append(run["peak_mb"])
    lines += ["", "Peak memory from the smallest to the largest size: " + "; ".join(
        f"{mode} {v[0]:.0f} -> {v[-1]:.0f} MB" for mode, v in peaks.items()) + ". `load`: the machine's "
        "one-minute load average when the run started (2 cores; other work ran beside it, so CPU seconds "
        "are inflated when it is high: bz2 decompression is about 40 % of the join's CPU)."]
    return "\n".join(lines) + "\n"


def split_markdown(res: dict) -> list[str]:
    """The split runs' table and what they say of one pass over a published bulk file."""
    runs = [(s["files"], r) for s in res["sizes"] for r in s["runs"] if r["mode"].startswith("split")]
    if not runs:
        return []
    lines = ["", "**Splitting for Dask** (`split`: `ingest --engine dask`'s pass over the bulk file and its "
             "companions, `statinterp/sources/courtlistener.py`, into JSON-lines parts, gzip level 1; "
             "`split-plain`: uncompressed parts). *bz2 alone*: decompressing every input file and nothing else, "
             "in the same process before the split; *parts read*: the join over every part, one after another "
             "(what the workers share), against `read` above for the whole file.", "",
             "| clusters | bz2 input | decompressed | mode | parts | split CPU s | bz2 alone CPU s | "
             "bz2 MB/CPU s | decompressed MB/CPU s | spool MB | parts read CPU s (largest part) | peak MB | load |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for files, r in runs:
        lines.append(f"| {files['clusters_with_opinions']:,} | {files['bytes'] / 1e6:.1f} MB | "
                     f"{r['decompressed_bytes'] / 1e6:.0f} MB | {r['mode']} | {r['parts']} | {r['split_cpu']:.1f} | "
                     f"{r['bz2_cpu']:.1f} ({100 * r['bz2_cpu'] / max(r['split_cpu'], 1e-9):.0f} %) | "
                     f"{files['bytes'] / 1e6 / max(r['split_cpu'], 1e-9):.2f} | "
                     f"{r['decompressed_bytes'] / 1e6 / max(r['split_cpu'], 1e-9):.1f} | "
                     f"{r['spool_bytes'] / 1e6:.1f} | {r['parts_cpu']:.1f} ({r['largest_part_cpu']:.2f}) | "
                     f"{r['peak_mb']:.0f} | {r.get('load', float('nan')):.1f} |")
    files, big = [(f, r) for f, r in runs if r["mode"] == "split"][-1]
    whole = next((r for s in res["sizes"] if s["files"] == files for r in s["runs"] if r["mode"] == "read"), None)
    rate = big["decompressed_bytes"] / 1e6 / big["split_cpu"]
    ratio = big["decompressed_bytes"] / files["bytes"]
    lines += ["", (
        f"One split pass of the {files['clusters_with_opinions']:,}-cluster files ran at {rate:.1f} MB of "
        f"decompressed input per CPU second, {big['bz2_cpu'] / big['split_cpu']:.0%} of it decompressing bz2; "
        f"reading its {big['parts']} parts one after another took {big['parts_cpu']:.1f} CPU s"
        + (f" against {whole['cpu']:.1f} s for the whole file (`read`)" if whole else "") + ". So one pass over "
        f"a published bulk file set takes about **D × 1000 / {rate:.0f} CPU seconds** on one core, D its "
        f"decompressed size in GB (opinions and companions: {1e5 / rate / 3600:.1f} h per 100 GB), before the "
        "workers start; it runs once, in the calling process, whatever the number of workers. These invented "
        f"files compress {ratio:.0f}× (a small vocabulary), more than real text does, so the bz2 column does not "
        "carry over to the real files: their decompressed size is the measure to use. "
        "Every worker reading the whole file and keeping 1/n of its clusters would instead pay the "
        "decompression and the companions n times (at 32 workers, 32 passes).")]
    plain = next((r for f, r in runs if r["mode"] == "split-plain" and f == files), None)
    if plain is not None:
        lines[-1] += (f" Parts in gzip level 1 against plain JSON lines: {big['split_cpu']:.1f} against "
                      f"{plain['split_cpu']:.1f} CPU s for the pass, {plain['spool_bytes'] / big['spool_bytes']:.1f}"
                      "× less disk; so gzip level 1 is the default.")
    return lines


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "child":
        child(argv[1:])
        return 0
    ap = argparse.ArgumentParser(prog="python -m benchmarks.courtlistener_bulk", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sizes", default="1000,10000", help="clusters with opinions, per run")
    ap.add_argument("--modes", default="read,store,split,split-plain")
    ap.add_argument("--split-parts", type=int, default=32, help="parts of the split modes")
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "RESULTS.md")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    res: dict = {"command": shown_command("python -m benchmarks.courtlistener_bulk", argv,
                                          {str(args.workdir): "WORK"}),
                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
                 "sqlite": __import__("sqlite3").sqlite_version, "cpu": platform.processor() or platform.machine(),
                 "cores": os.cpu_count(), "sizes": []}
    for n in (int(x) for x in args.sizes.split(",")):
        folder = args.workdir / f"cl-{n}"
        print(f"writing {n} clusters to {folder}", file=sys.stderr, flush=True)
        saved = folder / "files.json"
        if saved.exists():  # written by an earlier run (the generator is deterministic)
            files = json.loads(saved.read_text())
        else:
            files = write_invented(folder, n)
            saved.write_text(json.dumps(files))
        source = folder / f"opinions-{DATE}.csv.bz2"
        runs = [run_child(mode, source, args.workdir / f"coll-{n}" if mode != "read" else None, args.split_parts)
                for mode in args.modes.split(",")]
        res["sizes"].append({"files": files, "runs": runs})
    (args.workdir / "courtlistener_bulk.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    write_section(args.results, CL_BULK_HEADING, markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
