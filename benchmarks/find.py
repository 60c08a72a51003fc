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
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.ingest import _vm_hwm_mb, real_records, synthetic, write_source

#: Each term is looked up and found this many times; the least time is the figure (the first is kept too).
REPEATS = 3


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks.find child")
    ap.add_argument("collection")
    ap.add_argument("--terms", required=True)
    args = ap.parse_args(argv)
    from statinterp.collection import find as find_module
    from statinterp.collection.store import Collection
    from statinterp.text.term_match import fts_query

    start = time.perf_counter()
    find_module._joining_pipeline()
    pipeline_seconds = time.perf_counter() - start
    rows = []
    for term in args.terms.split(","):
        query = term.replace("_", " ")
        lookups, finds, find_walls = [], [], []
        for _ in range(REPEATS):
            with Collection.open(args.collection) as store:
                t0 = time.process_time()
                hits = sum(1 for _ in store.paragraphs_matching(fts_query(query)))
                lookups.append(time.process_time() - t0)
            with Collection.open(args.collection) as store:
                t0, w0 = time.process_time(), time.perf_counter()
                found = find_module.find_term(store, query)
                finds.append(time.process_time() - t0)
                find_walls.append(time.perf_counter() - w0)
        rows.append({"term": term, "fts_hits": hits, "lookup_first": lookups[0], "lookup_seconds": min(lookups),
                     "find_first": finds[0], "find_seconds": min(finds), "find_wall_min": min(find_walls),
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


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "child":
        child(argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("..") / "shared" / "data" / "statutory_interpretation")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--collection", type=Path, action="append", default=[],
                    help="An existing collection to measure as well (repeatable).")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    from statinterp.collection.ingest import ingest

    terms = sorted(p.name[:-4] for p in args.data.glob("*.zip"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    records = real_records(args.data)
    results: dict = {"command": "python -m benchmarks.find " + " ".join(argv), "sizes": [], "existing": [],
                     "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                 "load_average": os.getloadavg()}}
    for n in [int(x) for x in args.sizes.split(",") if x]:
        collection = args.workdir / f"collection-{n}"
        build = None
        if not (collection / "collection.sqlite").exists():
            source = args.workdir / f"source-{n}"
            written = write_source(synthetic(records, n), source)
            t0 = time.perf_counter()
            ingest([source], collection, statistics=False, citations=False)
            build = {**written, "ingest_seconds": time.perf_counter() - t0}
            print(f"built {collection}: {build['ingest_seconds']:.0f} s", file=sys.stderr, flush=True)
        res = run_child(collection, terms)
        res["n"] = n
        res["build"] = build
        results["sizes"].append(res)
        print(f"{n} cases: median find {statistics.median(r['find_seconds'] for r in res['terms']):.3f} s",
              file=sys.stderr, flush=True)
    for collection in args.collection:
        results["existing"].append(run_child(collection, terms))
    sizes = results["sizes"]
    if len(sizes) >= 2:
        ns = [s["n"] for s in sizes]
        growth = {}
        for i, term in enumerate(terms):
            growth[term] = {"find": slope(ns, [s["terms"][i]["find_seconds"] for s in sizes]),
                            "lookup": slope(ns, [s["terms"][i]["lookup_seconds"] for s in sizes])}
        results["growth"] = growth
        med = [statistics.median(r["find_seconds"] for r in s["terms"]) for s in sizes]
        b = slope(ns, med)
        results["median_growth"] = b
        results["extrapolated_median_find"] = {str(n): med[-1] * (n / ns[-1]) ** b for n in (100_000, 1_000_000)}
        medl = [statistics.median(r["lookup_seconds"] for r in s["terms"]) for s in sizes]
        bl = slope(ns, medl)
        results["median_lookup_growth"] = bl
        results["extrapolated_median_lookup"] = {str(n): medl[-1] * (n / ns[-1]) ** bl for n in (100_000, 1_000_000)}
    (args.workdir / "find.json").write_text(json.dumps(results, indent=1))
    if args.markdown:
        print(markdown(results))
    return 0


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
