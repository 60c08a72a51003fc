"""Replacing stored cases, and reading them back: what the collection's SQLite style costs.

    PYTHONPATH=CHECKOUT python benchmarks/replace.py [DATA] [--cases 300] [--rounds 5] [--read-passes 15]

Stores the first ``--cases`` distinct cases of the annotated data set (DATA, default
``$STATINTERP_SHARED_DATA``; without statistics or citations, so that the storing is what is
timed), then ``--rounds`` times replaces every one of them with a changed copy (one more line of
head matter): once with the writer's foreign keys on (as ``CollectionWriter`` writes), once off,
in alternating order. Then, ``--read-passes`` times, reads every case back (``record``,
``case``), every opinion's lines (``opinion_paragraphs``) and every paragraph holding "court"
(``paragraphs_matching``). Prints the median CPU seconds of each, as JSON. ``PYTHONPATH`` names
the checkout whose code is timed (this script uses only the public API), to compare two versions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.ingest import real_records
from statinterp.collection.ingest import analysis_settings, prepare_cases
from statinterp.collection.store import Collection, CollectionWriter


def _revision(records: list, k: int) -> list:
    return [dataclasses.replace(r, head_matter=f"{r.head_matter}\n[revision {k}]") for r in records]


def _cpu(work) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=os.environ.get("STATINTERP_SHARED_DATA", ""))
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--read-passes", type=int, default=15)
    args = parser.parse_args(argv)
    data = Path(args.data)
    records = real_records(data / "statutory_interpretation" if (data / "statutory_interpretation").is_dir()
                           else data)[:args.cases]

    def reprepare(record):
        return prepare_cases([record], None, citations=False)[0]

    replace: dict[str, list[float]] = {"ON": [], "OFF": []}
    with tempfile.TemporaryDirectory(prefix="statinterp-replace-") as tmp:
        folder = Path(tmp) / "col"
        with CollectionWriter(folder, analysis_settings(statistics=False)) as writer:
            writer.write(prepare_cases(records, None, citations=False))
            k = 0
            for i in range(args.rounds):
                for mode in (("ON", "OFF") if i % 2 == 0 else ("OFF", "ON")):
                    k += 1
                    prepared = prepare_cases(_revision(records, k), None, citations=False)
                    writer.db.execute(f"PRAGMA foreign_keys = {mode}")
                    replace[mode].append(_cpu(lambda p=prepared: writer.write(p, reprepare)))
        reads: dict[str, list[float]] = {"record": [], "case": [], "opinion_paragraphs": [], "paragraphs_matching": []}
        with Collection.open(folder) as c:
            ids = c.case_ids()
            opinions = [o["id"] for i in ids for o in c.opinions(i)]
            for _ in range(args.read_passes):
                reads["record"].append(_cpu(lambda: [c.record(i) for i in ids]))
                reads["case"].append(_cpu(lambda: [c.case(i) for i in ids]))
                reads["opinion_paragraphs"].append(_cpu(lambda: [c.opinion_paragraphs(o) for o in opinions]))
                reads["paragraphs_matching"].append(_cpu(lambda: list(c.paragraphs_matching('"court"'))))
            n_matching = len(list(c.paragraphs_matching('"court"')))
    print(json.dumps({
        "cases": len(records), "rounds": args.rounds, "paragraphs_with_court": n_matching,
        "replace_all_cpu_s": {f"foreign_keys {m}": round(statistics.median(v), 4) for m, v in replace.items()},
        "read_all_cpu_s": {name: round(statistics.median(v), 4) for name, v in reads.items()},
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
