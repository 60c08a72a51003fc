"""Shards on Dask: ingest with ``--shard-by`` on 1 and 2 workers, CPU per role, growth, all of CAP.

    nice -n 5 python -m benchmarks.shards --data ../shared/data/statutory_interpretation --workdir WORK \
        [--speedup-cases 1000] [--sizes 1000,10000] [--shard-by court] [--volume-cases 250]

Cases are real, as in ``benchmarks.ingest`` (:func:`benchmarks.ingest.synthetic`: the data set's
distinct cases reused with new ids and rotated paragraphs), ordered by their shard key before
they are written as CAP volumes of ``--volume-cases`` cases (a CAP volume holds one reporter's,
so mostly one court's, cases: a partition touches few shards). Ingest is analysed, without
citations (``--no-citations``: eyecite costs ~4.8 analyses, benchmarks/RESULTS.md "Ingest").

Every measured run is a fresh process (``python -m benchmarks.shards child ...``) that starts a
``LocalCluster`` of N single-threaded worker processes, loads each worker's spaCy pipeline before
the clock starts, and runs ``ingest(..., engine="dask", shard_by=KEY)`` on it. It records wall
seconds and CPU seconds per role: the workers preparing (the prepare tasks' CPU), the writers
storing (the write tasks'), the worker processes in all (their CPU, Dask's own work included),
and the coordinator (this process: allocating ids, the client and the local cluster's scheduler).
The 2-core machine is shared with other jobs, so the wall-clock speedup is shown beside the one
that follows from the CPU per role on an idle machine (:func:`idle_wall`).

Results go to WORK/shards.json and the "Shards on Dask" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.ingest import CAP_CASES, real_records, slope, synthetic, versions
from benchmarks.results_file import SHARDS_HEADING, shown_command, splice_section

#: CourtListener's opinions (bulk data, about 10 M), for the second extrapolation.
COURTLISTENER_OPINIONS = 10_000_000
#: Workers of the extrapolated cluster.
CLUSTER = 32


def write_sorted_source(records: list, folder: Path, key: str, volume_cases: int) -> dict:
    """Write ``records`` (in :func:`sorted_records` order) as CAP volumes; returns :func:`source_info`."""
    from statinterp.sources.cap import write_cap_volume

    if folder.exists():
        shutil.rmtree(folder)
    for v in range(0, len(records), volume_cases):
        write_cap_volume(records[v:v + volume_cases], folder / f"{v // volume_cases + 1:05d}")
    return source_info(records, key, volume_cases)


def source_info(records: list, key: str, volume_cases: int) -> dict:
    """Cases, characters, shards, the largest shard's cases, partitions and write tasks (one per
    partition and shard it holds) of ``records`` written in volumes of ``volume_cases``."""
    from statinterp.collection.shards import shard_key

    keys = [shard_key(r, key) for r in records]
    chars = [len(r.text) for r in records]
    parts = range(0, len(keys), volume_cases)
    return {"cases": len(records), "chars": sum(chars), "shards": len(set(keys)),
            "largest_shard": max(keys.count(k) for k in set(keys)), "partitions": len(parts),
            "write_tasks": sum(len(set(keys[v:v + volume_cases])) for v in parts),
            "partition_chars": [sum(chars[v:v + volume_cases]) for v in parts]}


def sorted_records(records: list, n: int, key: str) -> list:
    """The ``n`` synthetic cases in the order they are written (by shard key, then record order)."""
    from statinterp.collection.shards import shard_key

    return sorted(synthetic(records, n), key=lambda r: shard_key(r, key))


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks.shards child")
    ap.add_argument("source")
    ap.add_argument("collection")
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--shard-by", required=True)
    args = ap.parse_args(argv)
    import logging

    from distributed import Client, LocalCluster

    from statinterp.collection.dask_engine import worker_analyzer
    from statinterp.collection.ingest import ingest

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.CRITICAL)
    with Client(cluster) as client:
        client.run(lambda: bool(worker_analyzer()))  # each worker's pipeline loaded before the clock

        def worker_cpu() -> float:
            return sum(client.run(time.process_time).values())

        workers_before = worker_cpu()
        start, cpu = time.perf_counter(), time.process_time()
        summary = ingest([args.source], args.collection, engine="dask", scheduler=cluster.scheduler_address,
                         shard_by=args.shard_by, citations=False)
        result = {"wall": time.perf_counter() - start, "coordinator_cpu": time.process_time() - cpu,
                  "worker_processes_cpu": worker_cpu() - workers_before, "workers": args.workers,
                  "roles": summary.cpu_seconds, "summary": summary.as_dict(),
                  "disk_bytes": sum(f.stat().st_size for f in Path(args.collection).rglob("*") if f.is_file())}
    cluster.close()
    print("RESULT " + json.dumps(result), flush=True)


def run_child(source: Path, collection: Path, workers: int, key: str) -> dict:
    if collection.exists():
        shutil.rmtree(collection)
    cmd = [sys.executable, "-m", "benchmarks.shards", "child", str(source), str(collection), "--workers",
           str(workers), "--shard-by", key]
    load = os.getloadavg()[0]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = json.loads(next(x for x in out.splitlines() if x.startswith("RESULT "))[len("RESULT "):])
    res["loadavg"] = [load, os.getloadavg()[0]]
    r = res["roles"]
    print(f"  {workers} worker(s), {res['summary']['cases_read']} cases: {res['wall']:.1f} s wall; CPU preparing "
          f"{r['workers_preparing']:.1f}, storing {r['writers_storing']:.1f}, worker processes "
          f"{res['worker_processes_cpu']:.1f}, coordinator {res['coordinator_cpu']:.1f} s", file=sys.stderr, flush=True)
    return res


def idle_wall(res: dict, workers: int) -> float:
    """The wall seconds of the run on ``workers`` idle cores, from its CPU per role: the worker
    processes' CPU shared among the partitions by their characters and run in order, each
    partition on the first worker free (as the scheduler hands them out); no less than the
    largest shard's writes (one writer at a time) nor the coordinator's CPU (one process)."""
    chars = res["source"]["partition_chars"]
    free = [0.0] * workers
    for c in chars:
        free[free.index(min(free))] += res["worker_processes_cpu"] * c / sum(chars)
    share = res["source"]["largest_shard"] / res["source"]["cases"]
    return max(max(free), res["roles"]["writers_storing"] * share, res["coordinator_cpu"])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "child":
        child(argv[1:])
        return 0
    ap = argparse.ArgumentParser(prog="python -m benchmarks.shards", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/statutory_interpretation"))
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--speedup-cases", type=int, default=1000, help="cases ingested on 1 and on 2 workers")
    ap.add_argument("--sizes", default="1000,10000", help="growth on 2 workers (cases)")
    ap.add_argument("--shard-by", default="court")
    ap.add_argument("--volume-cases", type=int, default=250)
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "RESULTS.md")
    ap.add_argument("--markdown", action="store_true",
                    help="only write the RESULTS.md section from WORK/shards.json (e.g. of a run cut short)")
    args = ap.parse_args(argv)
    out_json = args.workdir / "shards.json"
    if args.markdown:
        res = json.loads(out_json.read_text())
        if any("partition_chars" not in r["source"] for r in res["runs"]):  # a run of before they were recorded
            records = real_records(args.data)
            for r in res["runs"]:
                r["source"] = source_info(sorted_records(records, r["n"], res["shard_by"]), res["shard_by"],
                                          res["volume_cases"])
            out_json.write_text(json.dumps(res, indent=1))
        write_results(args.results, res)
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    records = real_records(args.data)
    res: dict = {"command": "nice -n 5 " + shown_command("python -m benchmarks.shards", argv,
                                                         {str(args.data): "DATA", str(args.workdir): "WORK"}),
                 "versions": versions(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "cores": os.cpu_count(), "loadavg_start": os.getloadavg(), "shard_by": args.shard_by,
                 "volume_cases": args.volume_cases, "runs": []}
    sizes = sorted({args.speedup_cases, *(int(x) for x in args.sizes.split(",") if x)})
    for n in sizes:
        src = args.workdir / f"src-{n}"
        info = write_sorted_source(sorted_records(records, n, args.shard_by), src, args.shard_by, args.volume_cases)
        for workers in ((1, 2) if n == args.speedup_cases else (2,)):
            run = run_child(src, args.workdir / "set", workers, args.shard_by)
            res["runs"].append({"n": n, "source": info, **run})
            res["loadavg_end"] = os.getloadavg()
            res["seconds"] = time.time() - started
            out_json.write_text(json.dumps(res, indent=1))  # after every run: a run cut short keeps its figures
        shutil.rmtree(src)
    shutil.rmtree(args.workdir / "set", ignore_errors=True)
    write_results(args.results, res)
    return 0


def write_results(path: Path, res: dict) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else "# statinterp performance results\n"
    path.write_text(splice_section(text, SHARDS_HEADING, markdown(res)), encoding="utf-8")
    print(markdown(res))


def markdown(res: dict) -> str:
    runs = res["runs"]

    def row(r: dict) -> str:
        ro = r["roles"]
        return (f"| {r['n']:,} | {r['source']['partitions']} / {r['source']['shards']} | {r['workers']} | "
                f"{r['wall']:.1f} s | {ro['workers_preparing']:.1f} s | {ro['writers_storing']:.1f} s | "
                f"{r['worker_processes_cpu']:.1f} s | {r['coordinator_cpu']:.1f} s | "
                f"{idle_wall(r, r['workers']):.1f} s | {r['loadavg'][0]:.1f} → {r['loadavg'][1]:.1f} |")

    one = next(r for r in runs if r["workers"] == 1)
    two = next(r for r in runs if r["workers"] == 2 and r["n"] == one["n"])
    share = one["source"]["largest_shard"] / one["n"]
    idle = idle_wall(one, 1) / idle_wall(two, 2)
    growth = [r for r in runs if r["workers"] == 2]
    lines = [
        "## Shards on Dask (`ingest --engine dask --shard-by`): speedup, CPU per role, all of CAP",
        "",
        f"Command: `{res['command']}` (DATA: `../shared/data/statutory_interpretation`; WORK: a scratch folder); "
        f"{res['date']}, {res['seconds'] / 60:.0f} min. {res['cores']} cores shared with other engineers' jobs "
        f"(load average {res['loadavg_start'][0]:.1f} at start, {res['loadavg_end'][0]:.1f} at end; per run below). "
        "Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".",
        "",
        f"Cases: `benchmarks.ingest.synthetic` (the data set's 985 distinct real cases, reused with new ids and "
        f"rotated paragraphs), ordered by {res['shard_by']} and written as CAP volumes of {res['volume_cases']} "
        f"cases; analysed ingest without citations, `--shard-by {res['shard_by']}`. Each run is a fresh process "
        "with its own `LocalCluster` (single-threaded worker processes; each worker's spaCy pipeline loaded "
        "before the clock). CPU per role: *preparing* = the prepare tasks (parse, analyse, spool), *storing* = "
        "the write tasks (read the spool, SQLite, both FTS5 indexes, statistics), *worker processes* = all CPU "
        "of the workers (the tasks plus Dask's own work), *coordinator* = the calling process (allocating ids, "
        "the client, and the local cluster's scheduler, which runs in it). *Idle wall* = max(worker processes' "
        "CPU / workers, the largest shard's share of the storing, the coordinator's CPU): the wall time these "
        "CPU figures give on idle cores.",
        "",
        "| cases | partitions / shards | workers | wall | CPU preparing | CPU storing | CPU worker processes "
        "| CPU coordinator | idle wall | load average |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *[row(r) for r in runs],
        "",
        f"**Speedup from 1 to 2 workers ({one['n']:,} cases)**: wall clock {one['wall'] / two['wall']:.2f}× on "
        f"this shared machine (load average {one['loadavg'][0]:.1f}–{two['loadavg'][1]:.1f} on 2 cores: "
        "other jobs take the second core, so the wall-clock figure does not measure the engine); from the CPU per "
        f"role, **{idle:.2f}×** on idle cores (target ≥ 1.8×). The work does not grow with the workers: worker "
        f"processes' CPU {one['worker_processes_cpu']:.1f} s on 1, {two['worker_processes_cpu']:.1f} s on 2; the "
        f"storing is {one['roles']['writers_storing'] / one['worker_processes_cpu']:.0%} of it and spread over "
        f"{one['source']['shards']} shards (the largest {share:.0%} of the cases), so no writer bounds 2 workers.",
    ]
    if len(growth) >= 2:
        ns = [r["n"] for r in growth]
        prep = [r["roles"]["workers_preparing"] for r in growth]
        store = [r["roles"]["writers_storing"] for r in growth]
        coord = [r["coordinator_cpu"] for r in growth]
        other = [r["worker_processes_cpu"] - p - s for r, p, s in zip(growth, prep, store, strict=True)]
        big = growth[-1]
        n_big = big["n"]
        b_prep, b_store, b_coord = slope(ns, prep), slope(ns, store), slope(ns, coord)

        def at(total: float, b: float, n: int) -> float:  # extrapolated at least linearly
            return total * (n / n_big) ** max(b, 1.0)

        lines += ["", f"Growth on 2 workers, {' → '.join(f'{n:,}' for n in ns)} cases: CPU preparing ~N^{b_prep:.2f}, "
                  f"storing ~N^{b_store:.2f}, coordinator ~N^{b_coord:.2f} (Dask's own work in the workers "
                  f"{' / '.join(f'{o:.1f}' for o in other)} s).", ""]
        lines += ["| extrapolated to | cases | workers' preparing | writers' storing | coordinator | "
                  f"on {CLUSTER} workers (wall) |", "|---|---:|---:|---:|---:|---:|"]
        for name, n in (("all of CAP", CAP_CASES), ("CourtListener's opinions", COURTLISTENER_OPINIONS)):
            p, s = at(prep[-1], b_prep, n), at(store[-1], b_store, n)
            c, o = at(coord[-1], b_coord, n), at(other[-1], 1.0, n)
            wall = max((p + s + o) / CLUSTER, c)
            total = p + s + o
            lines.append(f"| {name} | {n / 1e6:.1f} M | {p / 3600:,.1f} h CPU ({p / total:.0%}) | "
                         f"{s / 3600:,.1f} h CPU ({s / total:.0%}) | {c / 3600:,.2f} h | **{wall / 3600:.1f} h** |")
        lines += ["", f"Each extrapolation takes the {n_big:,}-case run's CPU per role and grows it at its measured "
                  "exponent, at least linearly. On 32 workers the wall time is the workers' CPU (preparing, storing, "
                  "Dask) spread over 32, bounded below by the coordinator (one process) and by the largest shard's "
                  "writer: with shards by court a shard is one court's cases (CAP's largest court holds a few per "
                  "cent of them), so its writer needs a few per cent of the storing CPU, far below the spread "
                  "share; with shards by jurisdiction, a large jurisdiction's writer could bound the run (its share "
                  "of the storing CPU). The figures are for these cases, which average "
                  f"{big['source']['chars'] / n_big / 1e3:.1f} k characters; CAP's average is nearer 25 k, "
                  "which shrinks both."]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
