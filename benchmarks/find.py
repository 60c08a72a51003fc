"""find benchmark: latency per term as the collection grows, and size on disk per case.

    python -m benchmarks.find --data ../shared/data/statutory_interpretation --workdir WORK \
        [--sizes 1000,3000,10000] [--collection DIR ...]

Collections of N synthetic cases are made from the real cases of the annotated data set as
benchmarks/ingest.py makes them (case ``i mod R`` of the R real cases with a new id, paragraphs
of its first opinion rotated from the second use on), written as CAP volumes and ingested
without statistics and citations (``find`` reads neither; ``ingest(..., statistics=False,
citations=False)``). ``--collection DIR`` adds existing collections (e.g. the 985 distinct
cases of the data set ingested with statistics).

For each collection a fresh process (``python -m benchmarks.find child DIR``) builds the
segmenter (timed apart), then finds each of the 14 terms three times, each with a fresh
``Collection.open``, and keeps the first time ("cold": first lookup of that term in the
process; the operating system's file cache is warm, as right after an ingest) and the least
(the figure: the machine is shared, and the least time is the least disturbed), per term for
the FTS5 lookup alone (times are CPU seconds of the process, ``time.process_time``: SQLite
runs in the process, and CPU time is what a busy shared machine disturbs least; the least wall
time is kept as well)
(``paragraphs_matching``, rows counted) and the whole ``find_term`` (lookup, pattern,
segmentation of the windows around matches, case records). Growth: the exponent ``b`` of
``latency ~ N^b`` fitted (least squares on logs) over the synthetic sizes, per term, and the
median's extrapolation to 100,000 and 1,000,000 cases. Since a synthetic collection of k R
cases holds every matching sentence k times, the matches grow linearly with N here; with real
case law they grow with how often the term occurs.

Results go to WORK/find.json; ``--markdown`` prints the section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.ingest import _vm_hwm_mb, real_records, realistic, synthetic, write_source
from benchmarks.ingest import run_child as ingest_child

#: Each term is looked up and found this many times; the least time is the figure (the first is kept too).
REPEATS = 3
#: Extrapolated to these collection sizes (1 M; all of CAP).
EXTRAPOLATE = (1_000_000, 6_700_000)


def evict(collection: str) -> None:
    """Drop the collection's file from the operating system's page cache (``POSIX_FADV_DONTNEED``:
    this file only, clean pages only; nothing else on the shared machine is touched), so the next
    lookup reads from disk."""
    for path in Path(collection).glob("collection.sqlite*"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks.find child")
    ap.add_argument("collection")
    ap.add_argument("--terms", required=True)
    args = ap.parse_args(argv)
    from statinterp.collection import find as find_module
    from statinterp.collection.store import Collection

    start = time.perf_counter()
    find_module._joining_pipeline()
    pipeline_seconds = time.perf_counter() - start

    def lookup(query: str) -> tuple[float, float, int]:
        with Collection.open(args.collection) as store:
            t0, w0 = time.process_time(), time.perf_counter()
            hits = sum(1 for _ in find_module.candidate_paragraphs(store, query))
            return time.process_time() - t0, time.perf_counter() - w0, hits

    def find(query: str):
        with Collection.open(args.collection) as store:
            t0, w0 = time.process_time(), time.perf_counter()
            found = find_module.find_term(store, query)
            return time.process_time() - t0, time.perf_counter() - w0, found

    rows = []
    for term in args.terms.split(","):
        query = term.replace("_", " ")
        evict(args.collection)
        lookup_cold, lookup_cold_wall, hits = lookup(query)
        evict(args.collection)
        find_cold, find_cold_wall, found = find(query)
        lookups, finds, find_walls = [], [], []
        for _ in range(REPEATS):
            cpu, _wall, hits = lookup(query)
            lookups.append(cpu)
            cpu, wall, found = find(query)
            finds.append(cpu)
            find_walls.append(wall)
        rows.append({"term": term, "fts_hits": hits, "matched": found.paragraphs_matched,
                     "lookup_cold": lookup_cold, "lookup_cold_wall": lookup_cold_wall,
                     "lookup_seconds": min(lookups), "find_cold": find_cold, "find_cold_wall": find_cold_wall,
                     "find_seconds": min(finds), "find_wall_min": min(find_walls),
                     "sentences": found.counts["sentence"], "cases": found.counts["case"]})
    with Collection.open(args.collection) as store:
        info = store.info()
    print("RESULT " + json.dumps({"collection": args.collection, "pipeline_seconds": pipeline_seconds,
                                  "terms": rows, "cases": info["cases"], "paragraphs": info["paragraphs"],
                                  "size_bytes": info["size_bytes"], "bytes_per_case": info["bytes_per_case"],
                                  "peak_mb": _vm_hwm_mb()}), flush=True)


def run_child(collection: Path, terms: list[str]) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.find", "child", str(collection), "--terms", ",".join(terms)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def slope(xs: list[float], ys: list[float]) -> float:
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-6)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


DESIGNS = ("copies", "realistic")


def build(design: str, n: int, workdir: Path, records: list, terms: list[str]) -> tuple[Path, dict]:
    """The collection ``WORK/<design>-<n>`` (built unless there), and how it was built: the source
    written, and the ingest run (a fresh process: wall, CPU, peak memory; ``benchmarks.ingest``),
    kept in ``WORK/<design>-<n>.build.json``."""
    collection = workdir / f"{design}-{n}"
    record = workdir / f"{design}-{n}.build.json"
    if (collection / "collection.sqlite").exists() and record.exists():
        return collection, json.loads(record.read_text())
    source = workdir / f"source-{design}-{n}"
    cases = synthetic(records, n) if design == "copies" else realistic(records, n, terms)
    written = write_source(cases, source)
    del cases
    run = ingest_child("store", source, collection)
    shutil.rmtree(source)
    info = {"design": design, "n": n, "source": written, "store": run}
    record.write_text(json.dumps(info, indent=1))
    print(f"built {collection}: {run['wall']:.0f} s wall, {run['cpu']:.0f} s CPU, {run['peak_mb']:.0f} MB",
          file=sys.stderr, flush=True)
    return collection, info


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "child":
        child(argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("..") / "shared" / "data" / "statutory_interpretation")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--design", choices=DESIGNS, default="copies",
                    help="copies: k copies of the real cases (the matches grow ~N, the worst case); realistic: "
                         "the real cases once plus filler without the terms (the matches stay those of the data set)")
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--collection", type=Path, action="append", default=[],
                    help="An existing collection to measure as well (repeatable).")
    ap.add_argument("--build-only", action="store_true", help="build the collections, measure nothing")
    ap.add_argument("--markdown", action="store_true", help="print the RESULTS.md section from WORK/find.json")
    args = ap.parse_args(argv)
    out_json = args.workdir / "find.json"
    if args.markdown and not args.sizes:
        print(markdown(json.loads(out_json.read_text())))
        return 0

    terms = sorted(p.name[:-4] for p in args.data.glob("*.zip"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    records = real_records(args.data)
    shown = [("DATA" if a == str(args.data) else "WORK" if a == str(args.workdir) else a) for a in argv]
    results: dict = {"command": "python -m benchmarks.find " + " ".join(shown), "design": args.design,
                     "sizes": [], "existing": [],
                     "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                 "sqlite": sqlite3.sqlite_version, "load_average": os.getloadavg(),
                                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}}
    for n in [int(x) for x in args.sizes.split(",") if x]:
        collection, built = build(args.design, n, args.workdir, records, terms)
        if args.build_only:
            continue
        res = run_child(collection, terms)
        res["n"] = n
        res["build"] = built
        results["sizes"].append(res)
        print(f"{n} cases: median find {statistics.median(r['find_seconds'] for r in res['terms']):.3f} s, "
              f"max cold {max(r['find_cold_wall'] for r in res['terms']):.3f} s wall", file=sys.stderr, flush=True)
    if args.build_only:
        return 0
    for collection in args.collection:
        results["existing"].append(run_child(collection, terms))
    growth(results, terms)
    results["load_average_end"] = os.getloadavg()
    everything = json.loads(out_json.read_text()) if out_json.exists() else {}
    if "designs" not in everything:  # a file of the earlier layout: one run of the copies design
        everything = {"designs": {"copies": everything}} if everything else {"designs": {}}
    everything["designs"][args.design] = results
    out_json.write_text(json.dumps(everything, indent=1))
    if args.markdown:
        print(markdown(everything))
    return 0


def growth(results: dict, terms: list[str]) -> None:
    """Growth exponents (``latency ~ N^b``, least squares on logs) per term over all the sizes and
    over the last two, and extrapolations of the slowest and the median term."""
    sizes = results["sizes"]
    if len(sizes) < 2:
        return
    ns = [s["n"] for s in sizes]
    per_term = {}
    for i, term in enumerate(terms):
        row = {}
        for key in ("find_seconds", "lookup_seconds", "find_cold", "find_cold_wall"):
            ys = [s["terms"][i][key] for s in sizes]
            b_all, b_last = slope(ns, ys), slope(ns[-2:], ys[-2:])
            b = max(b_all, b_last)  # the steeper of the two: growth that speeds up is not hidden by the fit
            row[key] = {"b_all": b_all, "b_last": b_last,
                        "extrapolated": {str(m): ys[-1] * (m / ns[-1]) ** b for m in EXTRAPOLATE}}
        per_term[term] = row
    results["growth"] = per_term
    summary = {}
    for key in ("find_seconds", "lookup_seconds", "find_cold", "find_cold_wall"):
        med = [statistics.median(r[key] for r in s["terms"]) for s in sizes]
        summary[key] = {"median_b_all": slope(ns, med), "median_b_last": slope(ns[-2:], med[-2:]),
                        "median_extrapolated": {str(m): med[-1] * (m / ns[-1]) ** max(
                            slope(ns, med), slope(ns[-2:], med[-2:])) for m in EXTRAPOLATE},
                        "max_extrapolated": {str(m): max(per_term[t][key]["extrapolated"][str(m)] for t in terms)
                                             for m in EXTRAPOLATE}}
    results["growth_summary"] = summary


def markdown(res: dict) -> str:
    lines = ["## find: latency per term and size on disk", "", "```", res["command"], "```", "",
             f"{res['machine']['cpus']} CPUs, shared (load average at the start "
             f"{', '.join(f'{x:.1f}' for x in res['machine']['load_average'])}); Python {res['machine']['python']}. "
             "One fresh process per collection; each term found 3 times, each with a fresh `Collection.open` "
             "(file cache warm); CPU seconds (`time.process_time`), the least of the 3, the first (cold) in "
             "brackets. *Lookup* = the FTS5 "
             "query alone; *find* = lookup + pattern + segmentation of the lines around matches + case "
             "records.", "",
             "| collection | cases | MB on disk | kB / case | median lookup s | max lookup s | median find s "
             "(cold) | max find s (cold) | sentences found (all terms) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, r in [(f"synthetic {s['n']}", s) for s in res["sizes"]] + [
            (Path(e["collection"]).name, e) for e in res["existing"]]:
        t = r["terms"]
        lines.append(
            f"| {label} | {r['cases']} | {r['size_bytes'] / 1e6:.0f} | {r['bytes_per_case'] / 1e3:.1f} | "
            f"{statistics.median(x['lookup_seconds'] for x in t):.3f} | {max(x['lookup_seconds'] for x in t):.3f} | "
            f"{statistics.median(x['find_seconds'] for x in t):.3f} "
            f"({statistics.median(x['find_first'] for x in t):.3f}) | {max(x['find_seconds'] for x in t):.3f} "
            f"({max(x['find_first'] for x in t):.3f}) | "
            f"{sum(x['sentences'] for x in t)} |")
    if "median_growth" in res:
        e, el = res["extrapolated_median_find"], res["extrapolated_median_lookup"]
        lines += ["", f"Growth of the median over the synthetic sizes: lookup ~ N^{res['median_lookup_growth']:.2f}, "
                  f"find ~ N^{res['median_growth']:.2f} (the matches themselves grow ~ N here). Extrapolated "
                  f"median lookup: {el['100000']:.2f} s at 100 k cases, {el['1000000']:.2f} s at 1 M; median find: "
                  f"{e['100000']:.1f} s at 100 k, {e['1000000']:.1f} s at 1 M."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
