"""find benchmark: latency per term as the collection grows, and size on disk per case.

    python -m benchmarks.find --data ../shared/data/statutory_interpretation --workdir WORK \
        --design realistic [--sizes 1000,10000,100000] [--collection DIR ...] [--markdown]

Two designs of synthetic collections, made from the real cases of the annotated data set by
benchmarks/ingest.py's generator and written as CAP volumes:

* ``realistic``: the R distinct real cases once, spread evenly among filler cases made from real
  case text with every line that mentions any of the 14 terms removed (``ingest.realistic``):
  each term's matches stay those of the data set however large the collection, as a term's
  mentions in real case law depend on how often courts use it, not on the collection's size;
* ``copies`` (the worst case): case ``i mod R`` with a new id, paragraphs of its first opinion
  rotated from the second use on (``ingest.synthetic``): every matching sentence is there k
  times and the matches grow ~N.

Collections are ingested without statistics and citations (``find`` reads neither) by
``benchmarks.ingest``'s measured child process (wall, CPU, peak memory); each lives in
``WORK/<design>-<N>`` with how it was built in ``WORK/<design>-<N>.build.json`` and is reused
when there. ``--collection DIR`` adds existing collections (one file, or a set of shards: its
lookup is then each shard's, side by side, as in ``find``). ``--shard-by KEY`` compares the one file
with sets of the same source (``--rounds``, ``--threads 1,2``: each set also measured with that many
lookup threads, ``STATINTERP_SHARD_THREADS``).

For each collection a fresh process (``python -m benchmarks.find child DIR``) builds the
segmenter (timed apart), then for each of the 14 terms: drops the collection's file from the
page cache (``evict``) and times the lookup alone; drops it again and times ``find_term``
("cold": disk reads included, wall and CPU seconds); then 3 lookups and 3 finds, each with a
fresh ``Collection.open`` ("warm": the least CPU seconds, ``time.process_time``, the figure
least disturbed on a shared machine), and 3 lookups with the earlier prefix query
(:func:`~statinterp.text.term_match.fts_query`) for comparison. A second fresh process
(``child --earlier``) measures the same with the lookup before the position check (the pair query's
paragraphs, every one read): its figures are each term's ``earlier_<key>``, and
``same_tables_as_earlier`` says whether both found the same four tables. Cold figures add the bytes
read from the disk (``/proc/self/io``), which other jobs on a shared machine do not disturb.
Growth: the exponent ``b`` of ``latency ~ N^b`` (least squares on logs) over all sizes and over
the last step, per term; the steeper one extrapolates the largest size to 1 M cases and to all of CAP (6.7 M).

Results go to WORK/find.json (one entry per design); ``--markdown`` prints the section of
benchmarks/RESULTS.md (``--markdown --sizes ""`` from WORK/find.json alone).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.ingest import _vm_hwm_mb, real_records, realistic, slope, synthetic, write_source
from benchmarks.ingest import run_child as ingest_child
from benchmarks.results_file import shown_command
from statinterp.collection.shards import THREADS_VARIABLE

#: Each term is looked up and found this many times; the least time is the figure (the first is kept too).
REPEATS = 3
#: Extrapolated to these collection sizes (1 M; all of CAP).
EXTRAPOLATE = (1_000_000, 6_700_000)


def evict(collection: str) -> None:
    """Drop the collection's file (a set of shards: every shard's, its word list, and the set's word index) from the
    operating system's page cache (``POSIX_FADV_DONTNEED``: these files only, clean pages only;
    nothing else on the shared machine is touched), so the next lookup reads from disk."""
    for path in [*Path(collection).glob("collection.sqlite*"), *Path(collection).glob("shards/*/collection.sqlite*"),
                 *Path(collection).glob("shards/*/words.bin"), *Path(collection).glob("set-words.bin")]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def disk_read_bytes() -> int:
    """Bytes this process has had read from the disk so far (``read_bytes`` of ``/proc/self/io``: the
    page cache's misses, readahead included; 0 where the file is missing), a cold figure that other
    jobs on the machine do not disturb."""
    try:
        with open("/proc/self/io") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("read_bytes:")), 0)
    except OSError:
        return 0


def child(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="benchmarks.find child")
    ap.add_argument("collection")
    ap.add_argument("--terms", required=True)
    ap.add_argument("--earlier", action="store_true",
                    help="the lookup before the position check: the pair query (every boundary) and its "
                         "paragraphs, every one read")
    args = ap.parse_args(argv)
    from statinterp.collection import find as find_module
    from statinterp.collection.shards import each_part
    from statinterp.collection.shards import open_collection as open_store
    from statinterp.corpus.dataset import found_records
    from statinterp.text.term_match import fts_pair_query, fts_query, fts_word_options

    start = time.perf_counter()
    find_module._joining_pipeline()
    pipeline_seconds = time.perf_counter() - start
    candidates = find_module.candidate_paragraphs

    def earlier_candidates(store, term: str):
        """The lookup before the position check: the pair query (every boundary's pairs, "of|the" too)
        and its paragraphs, every one read."""
        if not (store.has_pairs and len(fts_word_options(term)) > 1):
            return candidates(store, term)
        query = fts_pair_query(term, store.occurring, every_boundary=True)
        return iter(()) if query is None else store.paragraphs_matching(query, pairs=True)

    if args.earlier:
        find_module.candidate_paragraphs = earlier_candidates

    def lookup(query: str) -> tuple[float, float, int, int]:
        with open_store(args.collection) as store:
            t0, w0, b0 = time.process_time(), time.perf_counter(), disk_read_bytes()
            hits = sum(each_part(store, _count_candidates, query, term=query))  # a set: side by side, as find
            return time.process_time() - t0, time.perf_counter() - w0, hits, disk_read_bytes() - b0

    def prefix_lookup(query: str) -> float:
        """The FTS5 query ``find`` used before (stem prefixes, :func:`fts_query`), for comparison."""
        with open_store(args.collection) as store:
            t0 = time.process_time()
            sum(1 for _ in store.paragraphs_matching(fts_query(query)))
            return time.process_time() - t0

    def find(query: str):
        with open_store(args.collection) as store:
            t0, w0, b0 = time.process_time(), time.perf_counter(), disk_read_bytes()
            found = find_module.find_term(store, query)
            return time.process_time() - t0, time.perf_counter() - w0, found, disk_read_bytes() - b0

    rows = []
    for term in args.terms.split(","):
        query = term.replace("_", " ")
        evict(args.collection)
        lookup_cold, lookup_cold_wall, hits, lookup_disk = lookup(query)
        evict(args.collection)
        find_cold, find_cold_wall, found, find_disk = find(query)
        lookups, finds, find_walls = [], [], []
        for _ in range(REPEATS):
            cpu, _wall, hits, _ = lookup(query)
            lookups.append(cpu)
            cpu, wall, found, _ = find(query)
            finds.append(cpu)
            find_walls.append(wall)
        row = {"term": term, "fts_hits": hits, "matched": found.paragraphs_matched,
               "lookup_cold": lookup_cold, "lookup_cold_wall": lookup_cold_wall, "lookup_cold_disk": lookup_disk,
               "lookup_seconds": min(lookups), "find_cold": find_cold, "find_cold_wall": find_cold_wall,
               "find_cold_disk": find_disk, "find_seconds": min(finds), "find_wall_min": min(find_walls),
               "sentences": found.counts["sentence"], "cases": found.counts["case"],
               "tables_sha256": hashlib.sha256(json.dumps(found_records(found.tables),
                                                          sort_keys=True).encode()).hexdigest()}
        if not args.earlier:
            row["prefix_lookup_seconds"] = min(prefix_lookup(query) for _ in range(REPEATS))
        with open_store(args.collection) as store:  # a set: the shards find asks (the others' lists lack a word)
            if hasattr(store, "may_hold"):
                row["shards_asked"], row["shards"] = len(store.may_hold(query)), len(store.selected)
        rows.append(row)
    with open_store(args.collection) as store:
        info = store.info()
    print("RESULT " + json.dumps({"collection": args.collection, "pipeline_seconds": pipeline_seconds,
                                  "terms": rows, "cases": info["cases"], "paragraphs": info["paragraphs"],
                                  "size_bytes": info["size_bytes"], "bytes_per_case": info["bytes_per_case"],
                                  "peak_mb": _vm_hwm_mb()}), flush=True)


def _count_candidates(store, query: str) -> int:
    from statinterp.collection import find as find_module  # its candidate_paragraphs, replaced by --earlier

    return sum(1 for _ in find_module.candidate_paragraphs(store, query))


def run_child(collection: Path, terms: list[str], earlier: bool = False, threads: int | None = None) -> dict:
    """One fresh measuring process (``threads``: a set's lookup threads, ``STATINTERP_SHARD_THREADS``)."""
    cmd = [sys.executable, "-m", "benchmarks.find", "child", str(collection), "--terms", ",".join(terms),
           *(["--earlier"] if earlier else [])]
    env = dict(os.environ)
    if threads is not None:
        env[THREADS_VARIABLE] = str(threads)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def run_both(collection: Path, terms: list[str]) -> dict:
    """The collection measured twice, each in a fresh process (each term's first find pays the same
    first-use costs): with ``find``'s lookup, and with the lookup before the position check (its
    figures as ``earlier_<key>`` beside each term's), and whether both found the same tables."""
    res = run_child(collection, terms)
    earlier = run_child(collection, terms, earlier=True)
    for row, old in zip(res["terms"], earlier["terms"], strict=True):
        row.update({f"earlier_{key}": value for key, value in old.items() if key != "term"})
        row["same_tables_as_earlier"] = row["tables_sha256"] == old["tables_sha256"]
    return res


DESIGNS = ("copies", "realistic")
#: Per term, the growth of these figures is fitted (``earlier_``: the lookup before the position check).
GROWTH_KEYS = tuple(prefix + key for prefix in ("", "earlier_") for key in (
    "find_seconds", "lookup_seconds", "find_cold", "find_cold_wall", "lookup_cold", "lookup_cold_wall", "fts_hits",
    "lookup_cold_disk", "find_cold_disk"))


def build(design: str, n: int, workdir: Path, records: list, terms: list[str],
          shard_by: Sequence[str] = ()) -> list[tuple[Path, dict]]:
    """The collection ``WORK/<design>-<n>`` and, for each key of ``shard_by``, the set of shards
    ``WORK/<design>-<n>-by-<key>`` of the same source (each built unless there, the ingests side by
    side, one fresh process each: wall, CPU, peak memory; ``benchmarks.ingest``), and how each was
    built: the source written and the ingest run, kept in ``WORK/<name>.build.json``."""
    targets: list[tuple[Path, str | None]] = [(workdir / f"{design}-{n}", None)]
    targets += [(workdir / f"{design}-{n}-by-{key}", key) for key in shard_by]

    def record(collection: Path) -> Path:
        return collection.with_name(collection.name + ".build.json")

    todo = [(c, key) for c, key in targets if not (record(c).exists() and c.exists())]
    if todo:
        source = workdir / f"source-{design}-{n}"
        cases = synthetic(records, n) if design == "copies" else realistic(records, n, terms)
        written = write_source(cases, source)
        del cases
        with ThreadPoolExecutor(len(todo)) as pool:
            runs = list(pool.map(lambda t: ingest_child("store", source, t[0], t[1]), todo))
        shutil.rmtree(source)
        for (collection, key), run in zip(todo, runs, strict=True):
            info = {"design": design, "n": n, "shard_by": key, "source": written, "store": run,
                    "built_side_by_side": len(todo)}
            record(collection).write_text(json.dumps(info, indent=1))
            print(f"built {collection}: {run['wall']:.0f} s wall, {run['cpu']:.0f} s CPU, {run['peak_mb']:.0f} MB",
                  file=sys.stderr, flush=True)
    return [(c, json.loads(record(c).read_text())) for c, _ in targets]


def compare_shards(pairs: list[tuple[Path, dict]], terms: list[str], rounds: int,
                   threads: Sequence[int] = ()) -> list[dict]:
    """Each collection measured ``rounds`` times, one fresh process each, the collections taking turns
    (a change of the machine's load reaches both alike); per term the least of each figure. ``threads``:
    each set of shards is measured with each of these numbers of lookup threads, as a collection of its
    own (default: the library's, one per CPU)."""
    measured = [(c, built, None) for c, built in pairs[:1]]
    for c, built in pairs[1:]:
        measured += [(c, built, t) for t in threads] if threads else [(c, built, None)]
    runs: list[list[dict]] = [[] for _ in measured]
    for _ in range(rounds):
        for i, (collection, _built, n) in enumerate(measured):
            runs[i].append(run_child(collection, terms, threads=n))
    out = []
    for (collection, built, n), rs in zip(measured, runs, strict=True):
        best = dict(rs[0])
        best["terms"] = []
        for rows in zip(*(r["terms"] for r in rs), strict=True):
            row = dict(rows[0])
            for key in ("lookup_cold", "lookup_cold_wall", "lookup_seconds", "find_cold", "find_cold_wall",
                        "find_seconds", "find_wall_min"):
                row[key] = min(x[key] for x in rows)
            row["same_tables_every_round"] = len({x["tables_sha256"] for x in rows}) == 1
            best["terms"].append(row)
        best.update(build=built, name=collection.name + ("" if n is None else f" ({n} thread{'s' * (n > 1)})"),
                    rounds=rounds, threads=n)
        out.append(best)
    return out


def shards_markdown(res: dict) -> str:
    """The table of one file against its set of shards, per size: median / slowest term."""
    lines = ["```", res["command"], "```", "",
             f"{res['machine']['date']}; load average {res['machine']['load_average'][0]:.1f} at the start, "
             f"{res['load_average_end'][0]:.1f} at the end; {res['rounds']} rounds, the collections taking turns, "
             "per term the least of the rounds; CPU seconds unless *wall*, median / slowest of the 14 terms.", "",
             "| cases | collection | on disk | built (wall, side by side) | lookup warm CPU | lookup cold wall | "
             "find warm CPU | find warm wall | find cold CPU | find cold wall | sentences | same tables |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

    def ms(rows: list[dict], key: str) -> str:
        values = [r[key] for r in rows]
        return f"{statistics.median(values):.3f} / {max(values):.3f}"

    for size in res["sizes"]:
        hashes = [[r["tables_sha256"] for r in c["terms"]] for c in size["collections"]]
        for c in size["collections"]:
            t = c["terms"]
            lines.append(
                f"| {c['cases']:,} | {c['name']} | {c['size_bytes'] / 1e9:.2f} GB "
                f"| {c['build']['store']['wall']:.0f} s "
                f"| {ms(t, 'lookup_seconds')} | {ms(t, 'lookup_cold_wall')} | {ms(t, 'find_seconds')} "
                f"| {ms(t, 'find_wall_min')} | {ms(t, 'find_cold')} | {ms(t, 'find_cold_wall')} "
                f"| {sum(r['sentences'] for r in t)} | {'yes' if all(h == hashes[0] for h in hashes) else 'NO'} |")
        one, *sets = size["collections"]
        for c in sets:
            parts = []
            for key, label in (("find_seconds", "find warm CPU"), ("find_wall_min", "find warm wall"),
                               ("find_cold", "find cold CPU"), ("find_cold_wall", "find cold wall")):
                a = [r[key] for r in one["terms"]]
                b = [r[key] for r in c["terms"]]
                parts.append(f"{label} {100 * (statistics.median(b) / statistics.median(a) - 1):+.0f} % / "
                             f"{100 * (max(b) / max(a) - 1):+.0f} %")
            lines += ["", f"{c['name']} against {one['name']} (median / slowest term): " + "; ".join(parts) + "."]
            if "shards_asked" in c["terms"][0]:
                asked = [r["shards_asked"] for r in c["terms"]]
                lines[-1] += (f" Shards asked per term (their lists hold every word and pair the term needs): "
                              f"{statistics.mean(asked):.1f} "
                              f"of {c['terms'][0]['shards']} on average, {min(asked)} to {max(asked)}.")
    return "\n".join(lines) + "\n"


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
                    help="An existing collection to measure as well, one file or a set of shards (repeatable).")
    ap.add_argument("--build-only", action="store_true", help="build the collections, measure nothing")
    ap.add_argument("--markdown", action="store_true", help="print the RESULTS.md section from WORK/find.json")
    ap.add_argument("--shard-by", type=_shard_keys, default=None,
                    help="compare each size's one-file collection with sets of shards by these keys (comma-separated: "
                         f"{', '.join(SHARD_KEYS)}) built from the same source (WORK/find-shards.json; --markdown "
                         "prints its table)")
    ap.add_argument("--rounds", type=int, default=2, help="with --shard-by: measurements of each collection, in turn")
    ap.add_argument("--threads", type=_whole_numbers, default=(),
                    help="with --shard-by: measure each set with each of these numbers of lookup threads "
                         "(comma-separated; STATINTERP_SHARD_THREADS), each as a collection of its own")
    args = ap.parse_args(argv)
    out_json = args.workdir / "find.json"
    if args.shard_by:
        return main_shards(args, argv)
    if args.markdown and not args.sizes:
        print(markdown(json.loads(out_json.read_text())))
        return 0

    terms, records, results = _start(args, argv)
    results.update(sizes=[], existing=[])
    for n in [int(x) for x in args.sizes.split(",") if x]:
        [(collection, built)] = build(args.design, n, args.workdir, records, terms)
        if args.build_only:
            continue
        res = run_both(collection, terms)
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
    everything["designs"][args.design] = _shown(results, {str(args.workdir): "WORK", str(args.data): "DATA"})
    out_json.write_text(json.dumps(everything, indent=1))
    if args.markdown:
        print(markdown(everything))
    return 0


SHARD_KEYS = ("court", "jurisdiction", "reporter", "source")


def _whole_numbers(value: str) -> list[int]:
    try:
        numbers = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: give whole numbers, comma-separated") from None
    if any(n < 1 for n in numbers):
        raise argparse.ArgumentTypeError(f"{value!r}: each number of threads is 1 or more")
    return numbers


def _shard_keys(value: str) -> list[str]:
    keys = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in keys if k not in SHARD_KEYS]
    if unknown or not keys:
        raise argparse.ArgumentTypeError(f"{value!r}: give keys among {', '.join(SHARD_KEYS)}, comma-separated")
    return keys


def _start(args: argparse.Namespace, argv: list[str]) -> tuple[list[str], list, dict]:
    """The terms, the data set's real records and the results' head (command, design, machine)."""
    terms = sorted(p.name[:-4] for p in args.data.glob("*.zip"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    command = shown_command("python -m benchmarks.find", argv, {str(args.data): "DATA", str(args.workdir): "WORK"})
    head = {"command": command, "design": args.design,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "sqlite": sqlite3.sqlite_version, "load_average": os.getloadavg(), "nice": os.nice(0),
                        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}}
    return terms, real_records(args.data), head


def main_shards(args: argparse.Namespace, argv: list[str]) -> int:
    """``--shard-by``: per size, the one-file collection against the set of shards of the same source."""
    out_json = args.workdir / "find-shards.json"
    if args.markdown and not args.sizes:
        print(shards_markdown(json.loads(out_json.read_text())))
        return 0
    terms, records, results = _start(args, argv)
    results.update(shard_by=",".join(args.shard_by), rounds=args.rounds, threads=list(args.threads), sizes=[])
    for n in [int(x) for x in args.sizes.split(",") if x]:
        pairs = build(args.design, n, args.workdir, records, terms, args.shard_by)
        if args.build_only:
            continue
        results["sizes"].append({"n": n, "collections": compare_shards(pairs, terms, args.rounds, args.threads)})
    if args.build_only:
        return 0
    results["load_average_end"] = os.getloadavg()
    out_json.write_text(json.dumps(_shown(results, {str(args.workdir): "WORK", str(args.data): "DATA"}), indent=1))
    if args.markdown:
        print(shards_markdown(results))
    return 0


def _shown(value, names: dict[str, str]):
    """``value`` with the machine's paths (the workdir, the data) replaced by their names."""
    if isinstance(value, str):
        for path, name in names.items():
            value = value.replace(path, name)
        return value
    if isinstance(value, dict):
        return {k: _shown(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v, names) for v in value]
    return value


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
        for key in GROWTH_KEYS:
            if any(key not in s["terms"][i] for s in sizes):
                continue
            ys = [max(s["terms"][i][key], 1) if key.endswith(("fts_hits", "_disk")) else s["terms"][i][key]
                  for s in sizes]
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
    builds = [s["build"] for s in sizes]
    ingest = {}
    for key in ("wall", "cpu"):
        ys = [b["store"][key] for b in builds]
        b_all, b_last = slope(ns, ys), slope(ns[-2:], ys[-2:])
        ingest[key] = {"b_all": b_all, "b_last": b_last, "extrapolated": {
            str(m): ys[-1] * (m / ns[-1]) ** max(b_all, b_last, 1.0) for m in EXTRAPOLATE}}
    disk = [s["size_bytes"] for s in sizes]
    ingest["disk"] = {"b_all": slope(ns, disk), "extrapolated": {
        str(m): disk[-1] / ns[-1] * m for m in EXTRAPOLATE}}
    ingest["peak_mb"] = [b["store"]["peak_mb"] for b in builds]
    results["ingest_growth"] = ingest


def _copies_markdown(res: dict) -> list[str]:
    """The table of the copies design (a run of the earlier layout: first = first call, file cache warm)."""
    lines = ["| collection | cases | MB on disk | kB / case | median lookup s | max lookup s | median find s "
             "(first) | max find s (first) | sentences found (all terms) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, r in [(f"copies {s['n']:,}", s) for s in res["sizes"]] + [
            (Path(e["collection"]).name, e) for e in res["existing"]]:
        t = r["terms"]

        def first(x: dict) -> float:
            return x.get("find_first", x.get("find_cold", 0.0))
        lines.append(
            f"| {label} | {r['cases']} | {r['size_bytes'] / 1e6:.0f} | {r['bytes_per_case'] / 1e3:.1f} | "
            f"{statistics.median(x['lookup_seconds'] for x in t):.3f} | {max(x['lookup_seconds'] for x in t):.3f} | "
            f"{statistics.median(x['find_seconds'] for x in t):.3f} ({statistics.median(first(x) for x in t):.3f}) | "
            f"{max(x['find_seconds'] for x in t):.3f} ({max(first(x) for x in t):.3f}) | "
            f"{sum(x['sentences'] for x in t)} |")
    return lines


def markdown(everything: dict) -> str:
    designs = everything["designs"]
    lines = ["## find: latency per term and size on disk", ""]
    res = designs.get("realistic")
    if res:
        m = res["machine"]
        lines += [
            "```", res["command"], "```", "",
            f"DATA: `../shared/data/statutory_interpretation`; WORK: a scratch folder (here on the machine's local "
            f"disk). {m['date']}; {m['cpus']} CPUs shared with other engineers' jobs (load average "
            f"{m['load_average'][0]:.1f} at the start, {res.get('load_average_end', [0])[0]:.1f} at the end), "
            f"run under `nice -n {m.get('nice', 10)}`; Python {m['python']}, SQLite {m['sqlite']}.", "",
            "**Realistic design.** The 985 distinct real cases of the data set once, spread evenly among filler "
            "cases, so each term's matches are the data set's whatever the size (in CAP a term's mentions depend "
            "on how often courts use it: the data set's terms have 18-616 sentences in all 6.7 M cases). The 1 k "
            "collection is the data set's own collection of the 14 shared terms (985 cases; the issue's 1,553 "
            "counts the cases of all 42 terms, of which only 14 are shared) plus 15 filler cases. Filler "
            "(`benchmarks.ingest.realistic`) is real case text: the real cases, paragraphs of the first opinion "
            "rotated and marked per copy, with every line that mentions any of the 14 terms removed "
            "(`without_terms`: `term_pattern`, the matcher `find` uses); the terms' single words stay ('income', "
            "'share', 'hours', 'worked', ...), so the FTS5 phrase lookups work through real postings. The filler "
            "comes from cases chosen because they use these terms, so their words are commoner than in CAP at "
            "large: the lookups here are if anything harder than in CAP. Collections are ingested without "
            "statistics and citations (`find` reads neither), by `benchmarks.ingest`'s child process (wall, CPU, "
            "peak memory VmHWM; the spaCy pipeline is loaded before the clock, so the peak includes it).", "",
            "Each collection is measured in a fresh process: per term, the collection file is first dropped from "
            "the operating system's page cache (`posix_fadvise(DONTNEED)` on `collection.sqlite` only) and the "
            "term found once: **cold** (disk reads included; wall seconds, CPU in brackets); then 3 times more, "
            "each with a fresh `Collection.open`: **warm**, the least CPU seconds (`time.process_time`: the machine "
            "is shared, CPU time is what other jobs disturb least). *Lookup* = the FTS5 part alone "
            "(`find.candidate_paragraphs`: which of the term's spellings occur, then, for a term of several words in a "
            "collection of format 2, the pair index's query, else the phrases); *find* = lookup + "
            "pattern + segmentation of the lines around matches + case records. The spaCy pipeline `find` builds "
            "once per process is timed apart (not in the figures: "
            f"{statistics.median(s['pipeline_seconds'] for s in res['sizes']):.1f} s).", ""] + _tables(res)
    old = designs.get("copies")
    if old and "lookup_cold" in old["sizes"][0]["terms"][0]:
        lines += ["", "**Copies design (the worst case).** k copies of the 985 real cases "
                  "(`benchmarks.ingest.synthetic`), so every matching sentence is there k times and the matches "
                  "grow ~N; same method:", "",
                  "```", old["command"], "```", ""] + _tables(old)
    elif old:
        lines += ["", "**Copies design (the worst case).** k copies of the 985 real cases, so every matching sentence "
                  "is there k times and the matches grow ~N; measured with `find`'s earlier FTS5 query (stem "
                  "prefixes) and the earlier method (first call with the file cache warm, in brackets):", "",
                  "```", old["command"], "```", ""] + _copies_markdown(old)
        if "median_growth" in old:
            e = old["extrapolated_median_find"]
            lines += ["", f"Median find ~ N^{old['median_growth']:.2f} (the matches themselves grow ~N here): "
                      f"extrapolated {e['100000']:.1f} s at 100 k cases."]
    return "\n".join(lines) + "\n"


def _tables(res: dict) -> list[str]:
    """The size table, the per-term table of the largest size, growth and extrapolations of one design."""
    lines = ["| cases | text | on disk | per case | ingest wall / CPU | ingest peak | median lookup warm | "
             "max lookup cold | median find warm | max find warm | median find cold | **max find cold** | "
             "sentences (14 terms) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["sizes"]:
        t, st = r["terms"], r["build"]["store"]
        lines.append(
            f"| {r['n']:,} | {r['build']['source']['chars'] / 1e9:.2f} G chars | {r['size_bytes'] / 1e9:.2f} GB | "
            f"{r['bytes_per_case'] / 1e3:.1f} kB | {st['wall']:.0f} s / {st['cpu']:.0f} s | "
            f"{st['peak_mb']:.0f} MB | {statistics.median(x['lookup_seconds'] for x in t):.3f} s | "
            f"{max(x['lookup_cold_wall'] for x in t):.3f} s | "
            f"{statistics.median(x['find_seconds'] for x in t):.3f} s | "
            f"{max(x['find_seconds'] for x in t):.3f} s | "
            f"{statistics.median(x['find_cold_wall'] for x in t):.3f} s | "
            f"**{max(x['find_cold_wall'] for x in t):.3f} s** | {sum(x['sentences'] for x in t)} |")
    big = res["sizes"][-1]
    g = res.get("growth", {})
    lines += ["", f"Per term at {big['n']:,} cases (growth exponent b of latency ~ N^b: the steeper of the fit "
              "over all sizes and the last step; extrapolated from the largest size with it):", "",
              "| term | FTS5 rows | matched | sentences | earlier prefix lookup warm | lookup cold (CPU) | "
              "lookup warm | find cold (CPU) | find warm | b find warm | b find cold | find cold at 1 M | "
              "at 6.7 M |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in big["terms"]:
        gt = g.get(x["term"], {})
        fw, fc = gt.get("find_seconds", {}), gt.get("find_cold_wall", {})
        bw = max(fw["b_all"], fw["b_last"]) if fw else float("nan")
        bc = max(fc["b_all"], fc["b_last"]) if fc else float("nan")
        e = fc.get("extrapolated", {})
        lines.append(
            f"| {x['term']} | {x['fts_hits']} | {x['matched']} | {x['sentences']} | "
            f"{x.get('prefix_lookup_seconds', float('nan')):.3f} | "
            f"{x['lookup_cold_wall']:.3f} ({x['lookup_cold']:.3f}) | {x['lookup_seconds']:.3f} | "
            f"{x['find_cold_wall']:.3f} ({x['find_cold']:.3f}) | {x['find_seconds']:.3f} | {bw:.2f} | {bc:.2f} | "
            f"{e.get('1000000', float('nan')):.2f} | {e.get('6700000', float('nan')):.2f} |")
    lines += _position_check_lines(res)
    gs = res.get("growth_summary")
    if gs:
        fw, fc, lk = gs["find_seconds"], gs["find_cold_wall"], gs["lookup_seconds"]
        lines += ["", f"Growth of the median term: warm find ~ N^{fw['median_b_all']:.2f} over all sizes "
                  f"(N^{fw['median_b_last']:.2f} over the last step), cold find ~ N^{fc['median_b_all']:.2f} "
                  f"(N^{fc['median_b_last']:.2f}), warm lookup ~ N^{lk['median_b_all']:.2f} "
                  f"(N^{lk['median_b_last']:.2f}). Extrapolated cold find, median term: "
                  f"{fc['median_extrapolated']['1000000']:.2f} s at 1 M cases, "
                  f"{fc['median_extrapolated']['6700000']:.2f} s at 6.7 M; slowest term: "
                  f"{fc['max_extrapolated']['1000000']:.2f} s at 1 M, {fc['max_extrapolated']['6700000']:.2f} s "
                  f"at 6.7 M."]
    ig = res.get("ingest_growth")
    if ig:
        w, c, d = ig["wall"], ig["cpu"], ig["disk"]
        lines += ["", f"Ingest without analysis (one process, one core): CPU ~ N^{c['b_all']:.2f} "
                  f"(N^{c['b_last']:.2f} over the last step), wall ~ N^{w['b_all']:.2f} "
                  f"(N^{w['b_last']:.2f}); peak memory "
                  f"{' / '.join(f'{x:.0f}' for x in ig['peak_mb'])} MB (flat: batches are streamed; most of it "
                  f"is the spaCy pipeline loaded before the clock); size on disk ~ N^{d['b_all']:.2f}. "
                  "Extrapolated at the steeper exponent (at least linear) to all of CAP (6.7 M cases): "
                  f"{c['extrapolated']['6700000'] / 3600:.1f} h CPU, {w['extrapolated']['6700000'] / 3600:.1f} h "
                  f"wall on this shared machine, {d['extrapolated']['6700000'] / 1e9:.0f} GB on disk "
                  "(this text averages 37 k characters per case; CAP's average is nearer 25 k)."]
    return lines


def _position_check_lines(res: dict) -> list[str]:
    """Before / after the position check (``find.candidate_paragraphs``), per size, for the terms whose
    pair query returned more paragraphs than the check reads at some size; and whether the 14 terms'
    tables are identical both ways."""
    sizes = [s for s in res["sizes"] if "earlier_fts_hits" in s["terms"][0]]
    if not sizes:
        return []
    terms = [t["term"] for t in sizes[0]["terms"] if any(
        s["terms"][i]["earlier_fts_hits"] != s["terms"][i]["fts_hits"]
        for s in sizes for i in range(len(s["terms"])) if s["terms"][i]["term"] == t["term"])]
    same = all(t["same_tables_as_earlier"] for s in sizes for t in s["terms"])
    from statinterp.collection.find import POSITION_CHECK_ROWS

    lines = ["", f"The position check (`find.candidate_paragraphs`: above {POSITION_CHECK_ROWS} rows from the pair "
             "query, only the rows the positions of the term's content words allow are read, "
             "`term_match.fts_near_query`) against the lookup before it (the pair query with every boundary's pairs, "
             "its rows every one read), each in a fresh process of the same run; before → after:", "",
             "| term | cases | rows read | matched | lookup cold: wall (CPU) | lookup cold: disk read | lookup warm | "
             "find cold: wall (CPU) | find cold: disk read | find warm |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def mb(x: dict, key: str) -> str:
        return f"{x[key] / 1e6:.1f} MB" if key in x else "–"

    for term in terms:
        for s in sizes:
            x = next(t for t in s["terms"] if t["term"] == term)
            lines.append(
                f"| {term} | {s['n']:,} | {x['earlier_fts_hits']} → {x['fts_hits']} | {x['matched']} | "
                f"{x['earlier_lookup_cold_wall']:.3f} ({x['earlier_lookup_cold']:.3f}) → "
                f"{x['lookup_cold_wall']:.3f} ({x['lookup_cold']:.3f}) | "
                f"{mb(x, 'earlier_lookup_cold_disk')} → {mb(x, 'lookup_cold_disk')} | "
                f"{x['earlier_lookup_seconds']:.3f} → {x['lookup_seconds']:.3f} | "
                f"{x['earlier_find_cold_wall']:.3f} ({x['earlier_find_cold']:.3f}) → "
                f"{x['find_cold_wall']:.3f} ({x['find_cold']:.3f}) | "
                f"{mb(x, 'earlier_find_cold_disk')} → {mb(x, 'find_cold_disk')} | "
                f"{x['earlier_find_seconds']:.3f} → {x['find_seconds']:.3f} |")
    g = res.get("growth", {})

    def b(gt: dict, key: str) -> str:
        return f"N^{gt[key]['b_all']:.2f}" if key in gt else "–"

    for term in terms:
        gt = g.get(term, {})
        if "earlier_fts_hits" in gt:
            lines += ["", f"*{term.replace('_', ' ')}* (fits over all sizes, before → after): rows read "
                      f"~{b(gt, 'earlier_fts_hits')} → ~{b(gt, 'fts_hits')}; cold lookup wall "
                      f"~{b(gt, 'earlier_lookup_cold_wall')} → ~{b(gt, 'lookup_cold_wall')}, CPU "
                      f"~{b(gt, 'earlier_lookup_cold')} → ~{b(gt, 'lookup_cold')}, disk read "
                      f"~{b(gt, 'earlier_lookup_cold_disk')} → ~{b(gt, 'lookup_cold_disk')}."]
    lines += ["", "Tables found (the four tables, every record) identical before and after for all 14 terms at every "
              f"size: **{'yes' if same else 'NO'}**."]
    return lines


if __name__ == "__main__":
    sys.exit(main())
