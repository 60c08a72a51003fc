"""find with a case filter (``--court``, ``--since``, ``--level``, ...) against find without one.

    python -m benchmarks.find_filters --data ../shared/data/statutory_interpretation --workdir WORK [--shard-by court]

The collection is the data set's real cases (985 cases of some 200 courts), ingested once as one
file (``WORK/dataset``; with ``--shard-by court`` also as a set of shards, ``WORK/dataset-court``)
without statistics or citations (find reads neither). For each of the 14 terms and each filter
(none; the most frequent court since 2000, ``--court ID --since 2000``; federal trial courts,
``--jurisdiction federal --level trial``; ``--since 2010``), a fresh process opens the collection
with the filter (``open_collection(..., case_filter=...)``: the filter's SQL is in the figure) and
runs ``find_term`` 3 times, each with a fresh open; the figure is the least CPU time
(``time.process_time``) of the three, then once more after dropping the collection's files from the
page cache (``benchmarks.find.evict``: cold wall and CPU). It checks that every sentence found
with a filter is one found without it and that its case passes the filter.

Results go to WORK/find_filters.json and, as a table, to stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: Each term is found this many times warm; the least CPU time is the figure.
REPEATS = 3


def build(data: Path, folder: Path, shard_by: str | None) -> None:
    from statinterp.collection.ingest import ingest

    if folder.exists():
        return
    ingest(sorted(data.glob("*.zip")), folder, fmt="dataset", citations=False, statistics=False, shard_by=shard_by)


def filters_of(folder: Path) -> dict[str, dict]:
    """The filters measured: none, the court with the most cases since 2000 (those cases), federal trial
    courts, since 2010."""
    from statinterp.collection.shards import open_collection
    from statinterp.corpus.authority import court_authority

    courts: dict[str, int] = {}
    with open_collection(folder) as collection:
        for case_id in collection.case_ids():
            case = collection.case(case_id, [])
            if case.date >= "2000":
                courts[case.court] = courts.get(case.court, 0) + 1
    top = max(courts, key=lambda c: (courts[c], c))
    court_id = court_authority(top).court_id or top
    return {"none": {}, "court-since-2000": {"courts": [court_id], "since": "2000"},
            "federal-trial": {"jurisdictions": ["federal"], "levels": ["trial"]}, "since-2010": {"since": "2010"}}


def child(folder: str, terms: list[str], filters: dict) -> dict:
    """One process: every term found with ``filters`` (warm, then cold)."""
    from benchmarks.find import evict
    from statinterp.collection.find import find_term
    from statinterp.collection.shards import open_collection
    from statinterp.corpus.authority import CaseFilter

    case_filter = CaseFilter(**{k: tuple(v) if isinstance(v, list) else v for k, v in filters.items()})
    with open_collection(folder) as collection:  # the segmenter built, and courts-db read, outside the figures
        find_term(collection, "vehicle")
    case_filter.accepts_court("", "")
    out = {}
    for term in terms:
        cpu = []
        found = None
        for _ in range(REPEATS):
            started = time.process_time()
            with open_collection(folder, case_filter=case_filter) as collection:
                found = find_term(collection, term)
            cpu.append(time.process_time() - started)
        evict(folder)
        wall, started_cpu = time.perf_counter(), time.process_time()
        with open_collection(folder, case_filter=case_filter) as collection:
            find_term(collection, term)
        assert found is not None
        cases = found.tables["case"]
        bad = [sid for sid, s in found.tables["sentence"].items() if not case_filter.accepts(cases[s["case_id"]])]
        out[term] = {"warm_cpu": min(cpu), "cold_cpu": time.process_time() - started_cpu,
                     "cold_wall": time.perf_counter() - wall, "sentences": sorted(found.tables["sentence"]),
                     "fts_hits": found.paragraphs_searched, "outside_filter": bad}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="run")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/statutory_interpretation"))
    parser.add_argument("--workdir", type=Path,
                        help="folder for the collections it builds and find_filters.json (required but for child)")
    parser.add_argument("--shard-by", default=None)
    parser.add_argument("--folder")
    parser.add_argument("--terms")
    parser.add_argument("--filters")
    args = parser.parse_args(argv)
    if args.command == "child":
        print(json.dumps(child(args.folder, args.terms.split(","), json.loads(args.filters))))
        return
    if args.workdir is None:
        parser.error("--workdir is required")
    args.workdir.mkdir(parents=True, exist_ok=True)
    terms = sorted(p.stem for p in args.data.glob("*.zip"))
    folders = {"one file": args.workdir / "dataset"}
    if args.shard_by:
        folders[f"shards by {args.shard_by}"] = args.workdir / f"dataset-{args.shard_by}"
    for name, folder in folders.items():
        build(args.data, folder, None if name == "one file" else args.shard_by)
    filters = filters_of(folders["one file"])
    results: dict[str, dict] = {}
    for name, folder in folders.items():
        for label, chosen in filters.items():
            run = subprocess.run([sys.executable, "-m", "benchmarks.find_filters", "child", "--folder", str(folder),
                                  "--terms", ",".join(terms), "--filters", json.dumps(chosen)],
                                 check=True, capture_output=True, text=True)
            results[f"{name} | {label}"] = {"filters": chosen, "terms": json.loads(run.stdout.splitlines()[-1])}
    (args.workdir / "find_filters.json").write_text(json.dumps(results, indent=1))
    print("| collection | filter | sentences | warm CPU median / slowest | cold CPU median / slowest | "
          "cold wall median / slowest | outside the filter | not found unfiltered |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for key, entry in results.items():
        name = key.split(" | ")[0]
        plain = {s for t in results[f"{name} | none"]["terms"].values() for s in t["sentences"]}
        per = entry["terms"].values()

        def fig(field: str, per=per) -> str:
            values = [t[field] for t in per]
            return f"{statistics.median(values):.3f} / {max(values):.3f}"

        found = {s for t in per for s in t["sentences"]}
        print(f"| {key.replace(' | ', ' | `')}` | {len(found)} | {fig('warm_cpu')} | {fig('cold_cpu')} | "
              f"{fig('cold_wall')} | {sum(len(t['outside_filter']) for t in per)} | {len(found - plain)} |")
    print(f"\nfilters: {json.dumps(filters)}")


if __name__ == "__main__":
    main()
