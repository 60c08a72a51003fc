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
from benchmarks.results_file import INGEST_HEADING, SHARDS_HEADING, section_of, shown_command, splice_section

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

    from statinterp.collection.ingest import ingest, worker_analyzer

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
    ap.add_argument("--speedup-cases", type=int, default=1000, help="cases ingested on 1 and on 2 workers (0: none)")
    ap.add_argument("--sizes", default="1000,10000", help="growth on 2 workers (cases)")
    ap.add_argument("--one-worker-sizes", default="", help="sizes also ingested on 1 worker (cases)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the runs of WORK/shards.json at other sizes and worker counts (its commands listed)")
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
    if args.keep and out_json.exists():
        earlier = json.loads(out_json.read_text())
        res.update(runs=earlier["runs"], commands=earlier.get("commands", [earlier["command"]]) + [res["command"]],
                   seconds=earlier.get("seconds", 0.0))
    one = {int(x) for x in args.one_worker_sizes.split(",") if x} | ({args.speedup_cases} - {0})
    two = {int(x) for x in args.sizes.split(",") if x} | ({args.speedup_cases} - {0})
    for n in sorted(one | two):
        src = args.workdir / f"src-{n}"
        info = write_sorted_source(sorted_records(records, n, args.shard_by), src, args.shard_by, args.volume_cases)
        for workers in [w for w, sizes in ((1, one), (2, two)) if n in sizes]:
            run = run_child(src, args.workdir / "set", workers, args.shard_by)
            res["runs"] = [r for r in res["runs"] if (r["n"], r["workers"]) != (n, workers)]
            res["runs"].append({"n": n, "source": info, **run})
            res["runs"].sort(key=lambda r: (r["n"], r["workers"]))
            res["loadavg_end"] = os.getloadavg()
            res["seconds"] = res.get("seconds", 0.0) + time.time() - started
            started = time.time()
            out_json.write_text(json.dumps(res, indent=1))  # after every run: a run cut short keeps its figures
        shutil.rmtree(src)
    shutil.rmtree(args.workdir / "set", ignore_errors=True)
    write_results(args.results, res)
    return 0


def write_results(path: Path, res: dict) -> None:
    """Write the section of RESULTS.md at ``path`` (after the ingest section when new) and the raw
    figures beside it (shards.json)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# statinterp performance results\n"
    if section_of(text, SHARDS_HEADING) is None and section_of(text, INGEST_HEADING) is not None:
        ingest = section_of(text, INGEST_HEADING) or ""
        at = text.index(ingest) + len(ingest)
        text = text[:at] + SHARDS_HEADING + "\n\n" + text[at:]
    path.write_text(splice_section(text, SHARDS_HEADING, markdown(res)), encoding="utf-8")
    path.with_name("shards.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    print(markdown(res))


def markdown(res: dict) -> str:
    runs = res["runs"]

    def row(r: dict) -> str:
        ro = r["roles"]
        thread = f" ({ro['coordinator_thread']:.1f} s)" if "coordinator_thread" in ro else ""
        finishing = f"{ro['writers_finishing']:.1f} s" if "writers_finishing" in ro else "—"
        return (f"| {r['n']:,} | {r['source']['partitions']} / {r['source']['shards']} / "
                f"{r['source']['write_tasks']} | {r['workers']} | {r['wall']:.1f} s | "
                f"{ro['workers_preparing']:.1f} s | {ro['writers_storing']:.1f} s | {finishing} | "
                f"{r['worker_processes_cpu']:.1f} s | {r['coordinator_cpu']:.1f} s"
                f"{thread} | {idle_wall(r, r['workers']):.1f} s | {r['loadavg'][0]:.1f} → {r['loadavg'][1]:.1f} |")

    growth = [r for r in runs if r["workers"] == 2]
    lines = [
        "## Shards on Dask (`ingest --engine dask --shard-by`): speedup, CPU per role, all of CAP",
        "",
        _heading_paragraph(res) +
        "Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".",
        "",
        f"Cases: `benchmarks.ingest.synthetic` (the data set's 985 distinct real cases, reused with new ids and "
        f"rotated paragraphs), ordered by {res['shard_by']} and written as CAP volumes of {res['volume_cases']} "
        f"cases (a CAP volume holds one reporter's cases: a partition touches few shards); analysed ingest without "
        f"citations, `--shard-by {res['shard_by']}`. Each run is a fresh process with its own `LocalCluster` "
        "(single-threaded worker processes; each worker's spaCy pipeline loaded before the clock). CPU per role: "
        "*preparing* = the prepare tasks (parse, analyse, spool), *storing* = the write tasks (read the spool, "
        "SQLite, both FTS5 indexes, statistics), *worker processes* = all CPU of the workers (the tasks plus "
        "Dask's own work), *coordinator* = the calling process (the local cluster's scheduler and the Dask "
        "client run in it; in brackets the calling thread alone: allocating ids, submitting tasks), *finishing* = "
        "the last task per shard (FTS5 `optimize` of both indexes and the word list; — : a run made before "
        "shards were finished). *Idle wall* "
        "= the wall time these CPU figures give on idle cores: the worker processes' CPU shared among the "
        "partitions by their characters and handed out in order to the first worker free, but no less than the "
        "largest shard's share of the storing (one writer at a time) nor the coordinator's CPU.",
        "",
        "| cases | partitions / shards / write tasks | workers | wall | CPU preparing | CPU storing | CPU finishing "
        "| CPU worker processes | CPU coordinator (thread) | idle wall | load average |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *[row(r) for r in runs],
        "",
        *_speedups(runs),
    ]
    if len(growth) >= 2:
        lines += _extrapolation(growth, runs)
    return "\n".join(lines)


def _heading_paragraph(res: dict) -> str:
    """The commands, date, duration and load of the runs."""
    commands = res.get("commands", [res["command"]])
    several = len(commands) > 1
    return (("Commands: " if several else "Command: ") + "; then ".join(f"`{c}`" for c in commands)
            + " (DATA: `../shared/data/statutory_interpretation`; WORK: a scratch folder); "
            + f"{'last run ' if several else ''}{res['date']}, {res['seconds'] / 60:.0f} min. {res['cores']} cores "
            f"shared with other engineers' jobs (load average {res['loadavg_start'][0]:.1f} at the start, "
            f"{res['loadavg_end'][0]:.1f} at the end; per run below). ")


def _speedups(runs: list[dict]) -> list[str]:
    """A paragraph per size measured on both 1 and 2 workers."""
    out = []
    for one in [r for r in runs if r["workers"] == 1]:
        two = next((r for r in runs if r["workers"] == 2 and r["n"] == one["n"]), None)
        if two is None:
            continue
        share = one["source"]["largest_shard"] / one["n"]
        own = idle_wall(one, 1) / idle_wall(two, 2)  # each run's own CPU
        same = idle_wall(one, 1) / idle_wall(one, 2)  # the 1-worker run's work on 2 workers
        extra = two["worker_processes_cpu"] - one["worker_processes_cpu"]
        loads = (sum(one["loadavg"]) / 2, sum(two["loadavg"]) / 2)
        if abs(loads[0] - loads[1]) > 3:  # CPU seconds stretch on an overloaded machine: not comparable
            out += [f"**Speedup from 1 to 2 workers, {one['n']:,} cases.** The two runs were made at different "
                    f"loads (load average about {loads[0]:.0f} and {loads[1]:.0f}), so neither their wall clocks "
                    f"({one['wall']:.0f} and {two['wall']:.0f} s) nor their CPU seconds "
                    f"({one['worker_processes_cpu']:.0f} and {two['worker_processes_cpu']:.0f} s in the workers) "
                    "compare. The 1-worker run's CPU "
                    f"handed out to 2 workers ({one['source']['partitions']} partitions in order): "
                    f"**{same:.2f}×** on idle cores, less the cold start of the second worker's analysis caches "
                    "(measured at 1,000 cases above, a fixed cost per worker).", ""]
            continue
        out += [f"**Speedup from 1 to 2 workers, {one['n']:,} cases.** Wall clock: {one['wall'] / two['wall']:.2f}× "
                f"(load average {one['loadavg'][0]:.1f} to {two['loadavg'][1]:.1f} on the 2 shared cores: the other "
                "jobs' processes take the cores the second worker needs, so the wall clock does not measure the "
                f"engine here). From the CPU per role on idle cores: **{own:.2f}×** with each run's own CPU; the "
                f"2-worker run's workers took {extra:+.1f} s of CPU ({extra / one['worker_processes_cpu']:+.0%}: "
                f"{two['worker_processes_cpu']:.1f} against {one['worker_processes_cpu']:.1f} s) for the same cases, "
                "tasks and writes: each worker process starts its analysis caches cold (spaCy's tokenizer cache, "
                "the lemma memo), and one process reuses them over all partitions (these synthetic cases repeat the "
                "same 985 texts, which favours it). Without that start-up cost (the 1-worker run's CPU handed out "
                f"to 2 workers, {one['source']['partitions']} partitions) {same:.2f}×. The storing is "
                f"{one['roles']['writers_storing'] / one['worker_processes_cpu']:.0%} of the workers' CPU, spread "
                f"over {one['source']['shards']} shards (the largest holds {share:.0%} of the cases): no writer "
                "bounds 2 workers, where before shards the single writer stored every case.", ""]
    return out


def _extrapolation(growth: list[dict], runs: list[dict]) -> list[str]:
    ns = [r["n"] for r in growth]
    prep = [r["roles"]["workers_preparing"] for r in growth]
    store = [r["roles"]["writers_storing"] for r in growth]
    finish = [r["roles"].get("writers_finishing", 0.0) for r in growth]
    other = [r["worker_processes_cpu"] - p - s - f for r, p, s, f in zip(growth, prep, store, finish, strict=True)]
    big = growth[-1]
    n_big = big["n"]
    thread = big["roles"].get("coordinator_thread", big["coordinator_cpu"])
    b_prep, b_store = slope(ns, prep), slope(ns, store)
    chars = big["source"]["chars"] / n_big
    shares = " / ".join(f"{r['coordinator_cpu'] / r['wall']:.1%}" for r in runs)

    def at(total: float, b: float, n: int) -> float:  # extrapolated at least linearly
        return total * (n / n_big) ** max(b, 1.0)

    lines = ["", f"**Growth** on 2 workers, {' → '.join(f'{n:,}' for n in ns)} cases: CPU preparing ~N^{b_prep:.2f}, "
             f"storing ~N^{b_store:.2f} (per case {store[0] / ns[0] * 1e3:.0f} → {store[-1] / ns[-1] * 1e3:.0f} ms: "
             "larger write tasks share each batch's statistics upserts); Dask's own work in the workers "
             f"{' / '.join(f'{o:.1f}' for o in other)} s. The coordinator's CPU is "
             f"{shares} of one core over each run's "
             "wall time whatever its cases: the periodic work of the local cluster's scheduler and the Dask client "
             "(heartbeats, monitors), not per case; its calling thread (allocating ids, submitting) took "
             f"{thread:.1f} s of it for {n_big:,} cases.", "",
             "| extrapolated to | cases | workers' preparing | writers' storing | finishing the shards | Dask in the "
             f"workers | coordinator thread | on {CLUSTER} workers (wall) | at 25 k characters a case |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, n in (("all of CAP", CAP_CASES), ("CourtListener's opinions", COURTLISTENER_OPINIONS)):
        p, s, o = at(prep[-1], b_prep, n), at(store[-1], b_store, n), at(other[-1], 1.0, n)
        f, t = at(finish[-1], 1.0, n), at(thread, 1.0, n)
        total = p + s + f + o
        wall = max(total / CLUSTER, t)
        lines.append(f"| {name} | {n / 1e6:.1f} M | {p / 3600:,.1f} h CPU ({p / total:.0%}) | "
                     f"{s / 3600:,.1f} h CPU ({s / total:.0%}) | {f / 3600:,.1f} h CPU ({f / total:.0%}) | "
                     f"{o / 3600:,.1f} h CPU | {t / 3600:,.2f} h | "
                     f"**{wall / 3600:.1f} h** | {max(total * 25e3 / chars / CLUSTER, t) / 3600:.1f} h |")
    spread = 1 / CLUSTER * (1 + (prep[-1] + other[-1]) / store[-1])
    lines += ["", (
        f"Each role's CPU of the {n_big:,}-case run grows at its measured exponent, at least linearly (the "
        f"calling thread linearly). On {CLUSTER} workers the wall time is the workers' CPU (preparing, storing, "
        f"Dask) spread over {CLUSTER}, bounded below by the calling thread (allocating ids: one process) and by "
        "the largest shard's writer (one at a time): with shards by court a shard holds one court's cases, so "
        f"the largest court's writer stays under the spread share of 1/{CLUSTER} of all work while that court "
        f"holds under {spread:.0%} of the cases (CAP's distribution by court is not measured here); by "
        "jurisdiction a large jurisdiction's writer would bound the run. The cases here average "
        f"{chars / 1e3:.1f} k characters; CAP's average is nearer 25 k (issue 17's estimate), and the last "
        "column scales the workers' CPU by it. CourtListener's bulk opinions come as one CSV file: `ingest "
        "--engine dask` splits it by cluster into parts, one partition each, in one pass on one core before the "
        "workers start (its rate: \"CourtListener bulk files\", *Splitting for Dask*); that pass is not in "
        "this extrapolation.")]
    calm = next((r for r in runs if r["n"] == n_big and r["workers"] == 1), None)
    if calm is not None and sum(calm["loadavg"]) < sum(big["loadavg"]):
        less = 1 - calm["worker_processes_cpu"] / big["worker_processes_cpu"]
        lines += ["", f"The {n_big:,}-case run on 1 worker, made at a lower load (load average "
                  f"{calm['loadavg'][0]:.1f} → {calm['loadavg'][1]:.1f}), took {less:.0%} less CPU in its worker for "
                  "the same cases: the CPU seconds above are stretched by the overloaded machine, and the "
                  "extrapolation from them is on the high side."]
    return lines


if __name__ == "__main__":
    sys.exit(main())
