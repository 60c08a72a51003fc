"""Ingest benchmark: throughput per core, growth, and the extrapolation to all of CAP.

    python -m benchmarks.ingest --data ../shared/data/statutory_interpretation --workdir WORK \
        [--throughput-cases 300] [--sizes 1000,10000] [--analysed-sizes 100,300] [--citation-cases 100]

Cases are real: the distinct cases of the annotated data set's term zips (read with the
``dataset`` reader). A synthetic collection of N cases takes case ``i mod R`` of the R real
cases, gives it a new id and, from its second use on, rotates the paragraphs of its first
opinion (so no two synthetic cases have the same text); the cases are written as CAP per-case
volumes of 500 cases (``statinterp.sources.cap.write_cap_volume``) and ingested from there.

Every measured run is a fresh process (``python -m benchmarks.ingest child ...``), which
reports its wall and CPU time and its own peak memory (VmHWM), one process, one core
(``--repeat N``: each run N times, interleaved; the lowest CPU time counts, all are kept):

* ``minimal``: a minimal spaCy pass, ``spacy.blank("en")`` with the ``sentencizer`` pipe,
  ``nlp.pipe`` over the case texts: the yardstick of issue 28 (default ingest <= 2 of them);
* ``analysis``: the project's own analysis alone (:func:`statinterp.collection.ingest.new_analyzer`,
  ``analyse`` over the case texts in ingest's batches, nothing stored);
* ``spacy``: one bare spaCy pass (``build_pipeline()`` + ``nlp.pipe``: the project's pipeline,
  sentence segmentation included) over the case texts - the floor, as in benchmarks/run.py;
* ``spacy_warmed``: the same pass after
  :class:`~statinterp.text.analysis.TokenizerCacheWarmer` has filled the tokenizer's cache with the
  texts' chunks, as the analysis does (spaCy's cache skips the rest of a text after its first
  special case, explosion/spaCy#13950): the floor the analysis itself could reach;
* ``store``: ``ingest(..., statistics=False, citations=False)``: read, parse, store, FTS5;
* ``analysed``: ``ingest(..., citations=False)``: the same plus the analysis and statistics;
* ``citations``: ``ingest(...)`` with eyecite citations as well (the default of the command);
  the spaCy pipeline and eyecite's modules are loaded before the clock starts, eyecite's patterns
  (compiled as first needed) are not.

Results go to WORK/ingest.json; ``--markdown`` prints the section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.results_file import INGEST_HEADING, shown_command, write_section

CAP_CASES = 6_700_000
VOLUME_CASES = 500
#: The measured runs (module docstring); the throughput section runs them all side by side.
MODES = ("minimal", "spacy", "spacy_warmed", "analysis", "store", "analysed", "citations")


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def real_records(data: Path) -> list:
    from statinterp.sources import Partition, read_partition
    from statinterp.sources.records import CaseRecord

    seen: dict[str, object] = {}
    for z in sorted(data.glob("*.zip")):
        for rec in read_partition(Partition(str(z), "dataset")):
            if isinstance(rec, CaseRecord) and rec.source_id not in seen and rec.opinions:
                seen[rec.source_id] = rec
    return list(seen.values())


def _copy(r, i: int, k: int):
    """Record ``r`` as synthetic case ``i``: a new id and, for copy ``k`` >= 1, the paragraphs of its
    first opinion rotated by ``k`` and marked (no two copies have the same text)."""
    ops = list(r.opinions)
    if k and ops[0].paragraphs:
        p = ops[0].paragraphs
        shift = k % len(p)
        ops[0] = dataclasses.replace(ops[0], paragraphs=p[shift:] + p[:shift] + (f"[synthetic copy {k}]",))
    return dataclasses.replace(r, source="cap", source_id=str(10_000_000 + i), opinions=tuple(ops))


def synthetic(records: list, n: int) -> list:
    """N cases: case ``i`` is copy ``i // R`` of real case ``i mod R`` (the first R are the real cases)."""
    return [_copy(records[i % len(records)], i, i // len(records)) for i in range(n)]


def without_terms(records: list, terms: list[str]) -> list:
    """The records with every line (opinion paragraph, head-matter line) that mentions one of
    ``terms`` removed, as ``find`` matches a term (:func:`~statinterp.text.term_match.term_pattern`).
    What is left is still real case text: the terms' single words occur in it, only the terms do not."""
    from statinterp.corpus.dataset import query_of, term_key
    from statinterp.text.term_match import term_pattern

    patterns = [term_pattern(query_of(term_key(t))) for t in terms]

    def keep(line: str) -> bool:
        return not any(p.search(line) for p in patterns)

    out = []
    for r in records:
        ops = tuple(dataclasses.replace(o, paragraphs=tuple(p for p in o.paragraphs if keep(p))) for o in r.opinions)
        head = "\n".join(line for line in r.head_matter.split("\n") if keep(line))
        out.append(dataclasses.replace(r, head_matter=head, opinions=ops))
    return out


def realistic(records: list, n: int, terms: list[str]) -> list:
    """N cases whose matches of ``terms`` are those of the R real cases, however large N: the R
    real cases once, and filler made as ``synthetic`` makes its copies (case ``i mod R``, rotated
    paragraphs) but from :func:`without_terms` of the real cases (no line mentions a term). The
    real cases are spread evenly among the filler (case ``j`` at position ``j N / R``), as cases
    mentioning a term are spread over a real collection, not stored first."""
    real = min(n, len(records))
    at = {j * n // real: j for j in range(real)}
    filler = without_terms(records, terms)
    return [_copy(records[at[i]], i, 0) if i in at else _copy(filler[i % len(filler)], i, 1 + i // len(filler))
            for i in range(n)]


def write_source(records: list, folder: Path) -> dict:
    from statinterp.sources.cap import write_cap_volume

    if folder.exists():
        shutil.rmtree(folder)
    for v in range(0, len(records), VOLUME_CASES):
        write_cap_volume(records[v:v + VOLUME_CASES], folder / f"{v // VOLUME_CASES + 1:05d}")
    size = sum(f.stat().st_size for f in folder.rglob("*.json"))
    return {"cases": len(records), "bytes": size, "chars": sum(len(r.text) for r in records)}


# --------------------------------------------------------------------------------------------
# child: one measured run


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks.ingest child")
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("source")
    ap.add_argument("--collection")
    ap.add_argument("--shard-by", default=None)
    args = ap.parse_args(argv)
    from statinterp.collection.ingest import ingest, new_analyzer
    from statinterp.sources import discover, read_partition
    from statinterp.text.segmentation import build_pipeline

    if args.mode == "minimal":
        import spacy

        texts = [r.text for p in discover([args.source]) for r in read_partition(p)]
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        nlp.max_length = max(nlp.max_length, *map(len, texts))
        start, cpu = time.perf_counter(), time.process_time()
        result = {"tokens": sum(len(doc) for doc in nlp.pipe(texts))}
    elif args.mode == "analysis":
        from statinterp.collection.ingest import BATCH_CASES
        from statinterp.text.analysis import Vocabulary

        texts = [r.text for p in discover([args.source]) for r in read_partition(p)]
        analyzer = new_analyzer()
        _ = analyzer.worker  # the pipeline is loaded before the clock starts
        start, cpu = time.perf_counter(), time.process_time()
        tokens = 0
        for b in range(0, len(texts), BATCH_CASES):  # as ingest batches its cases
            tokens += sum(len(a.ids) for a in analyzer.analyse(texts[b:b + BATCH_CASES]))
            analyzer.forget()
            analyzer.vocab = Vocabulary()
        result = {"tokens": tokens}
    elif args.mode in ("spacy", "spacy_warmed"):
        texts = [r.text for p in discover([args.source]) for r in read_partition(p)]
        nlp = build_pipeline()
        start, cpu = time.perf_counter(), time.process_time()
        if args.mode == "spacy_warmed":
            from statinterp.text.analysis import TokenizerCacheWarmer

            TokenizerCacheWarmer(nlp).warm(texts)
        tokens = sum(len(doc) for doc in nlp.pipe(texts))
        result = {"tokens": tokens}
    else:
        analyzer = new_analyzer()
        _ = analyzer.worker  # the pipeline is loaded before the clock starts, as for the spaCy pass
        if args.mode == "citations":
            import eyecite.find  # noqa: F401
        start, cpu = time.perf_counter(), time.process_time()
        s = ingest([args.source], args.collection, statistics=args.mode != "store", citations=args.mode == "citations",
                   analyzer=analyzer, shard_by=args.shard_by)
        result = s.as_dict()
        result["disk_bytes"] = sum(f.stat().st_size for f in Path(args.collection).rglob("*") if f.is_file())
    result.update(mode=args.mode, wall=time.perf_counter() - start, cpu=time.process_time() - cpu,
                  peak_mb=_vm_hwm_mb(), load=os.getloadavg()[0])
    print("RESULT " + json.dumps(result), flush=True)


def run_repeated(modes: tuple[str, ...], source: Path, collection: Path, repeat: int) -> dict:
    """Each mode ``repeat`` times, the rounds interleaved (so a change in the machine's load reaches
    every mode alike); per mode the run of least CPU time, with every run's CPU and wall time."""
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for _ in range(repeat):
        for m in modes:
            runs[m].append(run_child(m, source, None if m in ("minimal", "spacy", "spacy_warmed", "analysis")
                                     else collection))
    out = {}
    for m, rs in runs.items():
        best = dict(min(rs, key=lambda r: r["cpu"]))
        best["runs"] = [{"cpu": r["cpu"], "wall": r["wall"], "load": r.get("load")} for r in rs]
        out[m] = best
    return out


def run_child(mode: str, source: Path, collection: Path | None = None, shard_by: str | None = None) -> dict:
    if collection is not None and collection.exists():
        shutil.rmtree(collection)
    cmd = [sys.executable, "-m", "benchmarks.ingest", "child", mode, str(source)]
    if collection is not None:
        cmd += ["--collection", str(collection)]
    if shard_by is not None:
        cmd += ["--shard-by", shard_by]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    res = json.loads(line[len("RESULT "):])
    print(f"  {mode:12s} {source.name}: {res['wall']:.1f} s wall, {res['cpu']:.1f} s CPU, {res['peak_mb']:.0f} MB",
          file=sys.stderr, flush=True)
    return res


# --------------------------------------------------------------------------------------------


def write_results(path: Path, res: dict) -> None:
    write_section(path, INGEST_HEADING, markdown(res))
    path.with_name("ingest.json").write_text(json.dumps(res, indent=1), encoding="utf-8")


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for pkg in ("spacy", "spacy-lookups-data", "numpy", "eyecite", "lxml", "dask", "distributed"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "absent"
    out["sqlite"] = __import__("sqlite3").sqlite_version
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "child":
        child(argv[1:])
        return 0
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ingest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/statutory_interpretation"))
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--throughput-cases", type=int, default=300)
    ap.add_argument("--citation-cases", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each throughput mode (the least CPU counts)")
    ap.add_argument("--sizes", default="1000,10000", help="growth without analysis (cases)")
    ap.add_argument("--analysed-sizes", default="100,300", help="growth with analysis (cases)")
    ap.add_argument("--only", default="throughput,citations,growth,analysed_growth",
                    help="sections to run; the others are kept from WORK/ingest.json (its commands are listed)")
    ap.add_argument("--markdown", action="store_true", help="print the RESULTS.md section from WORK/ingest.json")
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "RESULTS.md",
                    help="the RESULTS.md whose ingest section is written (with --markdown: rewritten from WORK); "
                         "the raw figures go beside it to ingest.json")
    args = ap.parse_args(argv)
    out_json = args.workdir / "ingest.json"
    if args.markdown:
        res = json.loads(out_json.read_text())
        write_results(args.results, res)
        print(markdown(res))
        return 0
    if not args.data.is_dir():
        print(f"benchmarks.ingest: no data at {args.data} (give --data)", file=sys.stderr)
        return 2
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    records = real_records(args.data)
    only = set(args.only.split(","))
    command = shown_command("python -m benchmarks.ingest", argv, {str(args.data): "DATA", str(args.workdir): "WORK"})
    res: dict = {"command": command, "versions": versions(),
                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "real_cases": len(records),
                 "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                 "loadavg_start": os.getloadavg()}
    print(f"{len(records)} distinct real cases", file=sys.stderr)

    col = args.workdir / "col"
    if "throughput" in only:  # throughput per core, side by side on the same cases
        src = args.workdir / "throughput"
        res["throughput_source"] = write_source(synthetic(records, args.throughput_cases), src)
        res["throughput"] = run_repeated(MODES, src, col, args.repeat)
    if "citations" in only:
        csrc = args.workdir / "citations"
        res["citation_source"] = write_source(synthetic(records, args.citation_cases), csrc)
        res["citations"] = {m: run_child(m, csrc, col) for m in ("analysed", "citations")}

    res["growth"] = []
    for n in [int(x) for x in args.sizes.split(",") if x and "growth" in only]:
        src = args.workdir / f"growth-{n}"
        info = write_source(synthetic(records, n), src)
        res["growth"].append({"n": n, "source": info, "store": run_child("store", src, col)})
        shutil.rmtree(src)
    res["analysed_growth"] = []
    for n in [int(x) for x in args.analysed_sizes.split(",") if x and "analysed_growth" in only]:
        src = args.workdir / f"agrowth-{n}"
        info = write_source(synthetic(records, n), src)
        res["analysed_growth"].append({"n": n, "source": info, "analysed": run_child("analysed", src, col)})
        shutil.rmtree(src)
    shutil.rmtree(col, ignore_errors=True)
    res["loadavg_end"] = os.getloadavg()
    res["seconds"] = time.time() - started
    res["commands"] = [res["command"]]
    if out_json.exists():  # sections not run now are kept from the earlier run
        earlier = json.loads(out_json.read_text())
        res["commands"] = earlier.get("commands", [earlier.get("command")]) + [res["command"]]
        for key in ("throughput", "throughput_source", "citations", "citation_source", "growth", "analysed_growth"):
            if key in earlier and (key not in res or not res[key]):
                res[key] = earlier[key]
        if "analysed_growth" in only and "analysed_growth" in earlier:  # one table of every size measured
            sizes = {g["n"] for g in res["analysed_growth"]}
            res["analysed_growth"] = sorted([g for g in earlier["analysed_growth"] if g["n"] not in sizes]
                                            + res["analysed_growth"], key=lambda g: g["n"])
    out_json.write_text(json.dumps(res, indent=1))
    write_results(args.results, res)
    print(markdown(res))
    return 0


# --------------------------------------------------------------------------------------------


def slope(xs: list[float], ys: list[float]) -> float:
    """The growth exponent ``b`` of ``y ~ x^b``: least squares on logs (two or more points)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-6)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def _growth_reading(res: dict) -> list[str]:
    """One sentence per kind of run: CPU and peak memory from the smallest to the largest size of
    1,000 cases or more (smaller runs are dominated by start-up)."""
    out = []
    for key, run, kind in (("growth", "store", "without analysis"), ("analysed_growth", "analysed", "with analysis")):
        rows = [g for g in res.get(key, []) if g["n"] >= 1000]
        if len(rows) < 2:
            continue
        b = slope([g["n"] for g in rows], [g[run]["cpu"] for g in rows])
        sizes = " → ".join(f"{g['n']:,}" for g in rows)
        memory = " / ".join(f"{g[run]['peak_mb']:.0f}" for g in rows)
        out.append(f"Ingest {kind}, {sizes} cases: CPU ~ N^{b:.2f}; peak memory {memory} MB.")
    if out:
        from statinterp.text.analysis import MAX_MEMO_FORMS, MAX_SPACY_STRINGS, MAX_WARM_CHUNKS
        from statinterp.text.segmentation import MAX_CACHED_CLASSES

        out += ["", "Memory: readers stream one case at a time and batches are committed as they come, so nothing "
                "is held per case; what the analysis keeps of the words it has seen is bounded (the spaCy pipeline "
                f"is built afresh past {MAX_SPACY_STRINGS:,} strings, the lemma memo and the segmenter's class cache "
                f"forget themselves at {MAX_MEMO_FORMS:,} and {MAX_CACHED_CLASSES:,} entries, the tokenizer cache "
                f"warmer stops at {MAX_WARM_CHUNKS:,} chunks), and below those bounds grows with the distinct words "
                "seen."]
    return out


def _citations_lines(res: dict) -> list[str]:
    """The citations paragraph: from the throughput runs when they measured the default ingest, else
    from the separate citations section, else nothing (``--only throughput`` into an empty WORK)."""
    t = res.get("throughput", {})
    if "citations" in t:
        a, c = t["analysed"]["cpu"], t["citations"]["cpu"]
        return [f"Citations (eyecite, paragraph by paragraph: `statinterp.text.citations.stored_citations`) on the "
                f"same {res['throughput_source']['cases']} cases: the default ingest takes {c:.1f} CPU s, "
                f"{c - a:.1f} s more than `--no-citations` (× {c / a:.2f}).", ""]
    if "citations" not in res:
        return []
    c = res["citations"]
    return [f"Citations (eyecite, paragraph by paragraph) on {res['citation_source']['cases']} cases: analysed "
            f"ingest {c['analysed']['cpu']:.1f} CPU s, with citations {c['citations']['cpu']:.1f} CPU s "
            f"(× {c['citations']['cpu'] / c['analysed']['cpu']:.2f}): eyecite costs more than the analysis; "
            "`--no-citations` leaves it out.", ""]


def _warmed_lines(t: dict) -> list[str]:
    """What the warmed spaCy pass says, when the run measured it."""
    if "spacy_warmed" not in t:
        return []
    w, floor, a = t["spacy_warmed"], t["spacy"], t["analysed"]
    return ["", "The analysis tokenizes each distinct whitespace-separated chunk once on its own before the "
            "texts' pass (`statinterp.text.analysis.TokenizerCacheWarmer`): spaCy's tokenizer stops caching a "
            "text's chunks after its first special case (\"U.S.\", \"Cir.\": early in every case text; "
            "explosion/spaCy#13950, open), so a bare pass runs the affix rules again for almost every token. The "
            f"tokens are the same (tested token for token); the bare pass drops from {floor['cpu']:.1f} to "
            f"{w['cpu']:.1f} CPU s with the same warming. Measured against that warmed pass, analysed ingest "
            f"costs **{a['cpu'] / w['cpu']:.2f}** spaCy passes, the analysis and statistics alone "
            f"{(a['cpu'] - t['store']['cpu']) / w['cpu']:.2f}: the ratio against the bare pass is low "
            "because the analysis avoids spaCy's slow path, not because it adds little to a fast one."]


def _minimal_lines(t: dict) -> list[str]:
    """The ratios of issue 28 (default ingest <= 2 minimal spaCy passes), when the run measured them."""
    if not all(k in t for k in ("minimal", "analysis", "citations")):
        return []
    m, a, no, default = t["minimal"]["cpu"], t["analysis"]["cpu"], t["analysed"]["cpu"], t["citations"]["cpu"]
    met = "**met**" if default <= 2 * m else "**not met**"
    loads = [r["load"] for r in t.values() for r in r.get("runs", []) if r.get("load") is not None]
    load = f" (load average {min(loads):.1f} to {max(loads):.1f} at the runs' ends)" if loads else ""
    return [f"**Default ingest (with citations) / minimal spaCy pass = {default / m:.2f}** in CPU time "
            f"(target ≤ 2: {met}); against the project's analysis alone {default / a:.2f}. Without citations "
            f"(`--no-citations`): {no / m:.2f} minimal passes, {no / a:.2f} analyses. The citations add "
            f"{default - no:.1f} CPU s ({(default - no) / m:.2f} minimal passes){load}. The minimal pass runs "
            "spaCy's tokenizer without the cache warming described below, which the analysis has: so the "
            "analysis alone costs less than the minimal pass.", ""]


def markdown(res: dict) -> str:
    """The RESULTS.md section. Per-core rates use CPU seconds: the machine's 2 cores were shared
    with other jobs, so wall times (shown too) are inflated by waiting for a core."""
    t = res["throughput"]
    src = res["throughput_source"]
    n, mb, chars = src["cases"], src["bytes"] / 1e6, src["chars"]
    floor = t["spacy"]

    minimal = t.get("minimal")

    def row(name: str, r: dict) -> str:
        each = " / ".join(f"{x['cpu']:.1f}" for x in r.get("runs", [r]))
        versus = f"{r['cpu'] / minimal['cpu']:.2f}" if minimal else "–"
        return (f"| {name} | {r['wall']:.1f} s | {r['cpu']:.1f} s | {each} | {n / r['cpu']:.1f} | "
                f"{mb / r['cpu']:.2f} | {versus} | {r['cpu'] / floor['cpu']:.2f} | {r['peak_mb']:.0f} MB |")

    ratio = t["analysed"]["cpu"] / floor["cpu"]
    cmds = res.get("commands", [res["command"]])
    commands = ("Commands: " if len(cmds) > 1 else "Command: ") + "; then ".join(f"`{c}`" for c in cmds)
    lines = [
        "## Ingest (`statinterp ingest`): throughput, growth, all of CAP",
        "",
        f"{commands} (DATA: `../shared/data/statutory_interpretation` beside the repository; "
        f"WORK: a scratch folder); {'last run ' if len(cmds) > 1 else ''}{res['date']}, "
        f"{res['seconds'] / 60:.0f} min. {res['cores']} cores shared with "
        f"other engineers' jobs (load average {res['loadavg_start'][0]:.1f} at start, "
        f"{res['loadavg_end'][0]:.1f} at end), so per-core rates are computed from CPU seconds; wall seconds are "
        "shown beside them. Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".",
        "",
        f"Cases: the {res['real_cases']} distinct real cases of the data set's term zips, reused with new ids and "
        "rotated paragraphs for larger collections, written as CAP per-case volumes of 500 cases. Every run is a "
        "fresh process on one core (`--engine local`), the spaCy pipeline loaded before the clock starts; peak "
        "memory is that process's VmHWM.",
        "",
        f"### Throughput per core ({n} cases, {mb:.1f} MB of CAP JSON, {chars / 1e6:.1f} M characters of text)",
        "",
        "| run | wall | CPU (least) | CPU of each run | cases/s (CPU) | MB/s (CPU) | × minimal pass (CPU) | "
        "× bare spaCy (CPU) | peak memory |",
        "|---|---|---|---|---|---|---|---|---|",
        *([row("minimal spaCy pass (`spacy.blank(\"en\")` + `sentencizer`, `nlp.pipe`)", minimal)] if minimal else []),
        row("bare spaCy pass (`build_pipeline()` + `nlp.pipe`)", floor),
        *([row("spaCy pass, tokenizer cache warmed first (`TokenizerCacheWarmer`)", t["spacy_warmed"])]
          if "spacy_warmed" in t else []),
        *([row("the project's analysis alone (`Analyzer.analyse`, ingest's batches)", t["analysis"])]
          if "analysis" in t else []),
        row("ingest without analysis (parse, store, FTS5)", t["store"]),
        row("ingest with analysis and statistics (`--no-citations`)", t["analysed"]),
        *([row("ingest, the default: with eyecite citations as well", t["citations"])] if "citations" in t else []),
        "",
        *_minimal_lines(t),
        f"**Analysed ingest / bare spaCy = {ratio:.2f}** in CPU time "
        f"({t['analysed']['wall'] / floor['wall']:.2f} in wall time); target ≤ 1.2. Without the storing that "
        f"ingest without analysis measures (parse, store, both FTS5 indexes), the analysis and statistics take "
        f"{(t['analysed']['cpu'] - t['store']['cpu']) / floor['cpu']:.2f} bare spaCy passes.",
        *_warmed_lines(t),
        "",
        *_citations_lines(res),
        "### Growth",
        "",
        "| cases | characters | run | wall | CPU | cases/s (CPU) | peak memory | size on disk | per case |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def grow(nn: int, kind: str, r: dict, info: dict) -> str:
        return (f"| {nn:,} | {info['chars'] / 1e6:.1f} M | {kind} | {r['wall']:.1f} s | {r['cpu']:.1f} s | "
                f"{nn / r['cpu']:.1f} | "
                f"{r['peak_mb']:.0f} MB | {r['disk_bytes'] / 1e6:.0f} MB | {r['disk_bytes'] / nn / 1e3:.1f} kB |")

    for g in res["growth"]:
        lines.append(grow(g["n"], "without analysis", g["store"], g["source"]))
    for g in res["analysed_growth"]:
        lines.append(grow(g["n"], "with analysis", g["analysed"], g["source"]))
    lines += ["", *_growth_reading(res)]
    per_char = t["analysed"]["cpu"] / chars  # CPU s per character, one core, with analysis
    store_per_case = t["store"]["cpu"] / n
    if res["growth"]:
        big = res["growth"][-1]
        store_per_case = big["store"]["cpu"] / big["n"]
    avg_chars = chars / n
    total = CAP_CASES * avg_chars * per_char
    writer = CAP_CASES * store_per_case
    cluster = max(total / 32, writer)
    lines += [
        "",
        "### All of CAP (6.7 M cases), extrapolated",
        "",
        f"At this run's analysed rate ({chars / t['analysed']['cpu'] / 1e3:.0f} k characters per CPU second) and "
        f"the sample's {avg_chars / 1e3:.1f} k characters per case (issue 17 estimates about 25 k per CAP case, "
        f"2.5 GB for 100 k cases; at that length the times below shrink by {1 - 25e3 / avg_chars:.0%}): "
        f"one core **{total / 3600:,.0f} h** ({total / 86400:.1f} days); a 32-worker "
        f"Dask cluster **{cluster / 3600:,.1f} h**: the workers' share is {total / 32 / 3600:,.1f} h, and the single "
        f"writer needs at most {writer / 3600:,.1f} h (the without-analysis rate of the largest growth run, which "
        "also parses; the writer's own part is smaller). With citations, multiply the workers' share by the eyecite "
        "factor above.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
