"""review benchmark: the cost of one label in continuous mode, and of one explanation.

    python -m benchmarks.review --data ../shared/data/statutory_interpretation [--term technological_measure]
        [--labels 100] [--explain 20] [--markdown]

On the term (default: the largest of the data set, 616 sentences), with ``learned:default`` as
the method, through the web app's own code path (:class:`statinterp.app.review.session.ReviewSession`,
a label store in a temporary folder):

* *first order*: the ranking, the term's features and the first continuous state (once per term);
* *per label*: ``session.label`` (the durable write) + ``session.update_continuous`` (refit of the
  within-term learner, re-rank of the rest below the reviewer's position, the estimate of what is
  left), for ``--labels`` labels given in the order shown with the data set's labels: mean, 95th
  percentile and worst wall seconds; the update alone beside it;
* *explain*: ``session.explain`` of ``--explain`` sentences with ``learned:default`` (wall seconds
  per sentence, the first one apart: it builds what the later ones reuse).

Writes the section ``REVIEW_HEADING`` of benchmarks/RESULTS.md (``--markdown``) and prints it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.results_file import REVIEW_HEADING, shown_command, write_section

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--term", default=None, help="term key (default: the data set's largest labelled term)")
    ap.add_argument("--labels", type=int, default=100)
    ap.add_argument("--explain", type=int, default=20)
    ap.add_argument("--markdown", action="store_true", help="write the section into benchmarks/RESULTS.md")
    args = ap.parse_args(argv)

    from statinterp.app.review.session import ReviewSession
    from statinterp.corpus.dataset import LABEL_GAINS
    from statinterp.corpus.labels import LabelStore
    from statinterp.learned.model import default_ranker
    from statinterp.provenance import run_provenance
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(args.data))
    key = args.term or max((ix for ix in prepared if ix.term.labelled), key=len).key
    index = prepared[key]
    by_gain = {g: label for label, g in LABEL_GAINS.items()}
    with tempfile.TemporaryDirectory() as tmp:
        store = LabelStore(Path(tmp) / "labels.sqlite")
        t = time.perf_counter()
        session = ReviewSession(index, store, model=default_ranker())
        state = session.continuous_state()
        first = time.perf_counter() - t
        per_label, updates = [], []
        for k in range(min(args.labels, len(index) - 1)):
            s = index.sentences[int(state.order[k])]
            label = by_gain[int(s.gain)] if s.gain is not None else "no value"
            t = time.perf_counter()
            session.label([s.id], label)
            u = time.perf_counter()
            state = session.update_continuous()
            done = time.perf_counter()
            per_label.append(done - t)
            updates.append(done - u)
        explain = []
        for c in state.order[: args.explain]:
            t = time.perf_counter()
            session.explain(index.sentences[int(c)].id)
            explain.append(time.perf_counter() - t)
        store.close()
    command = shown_command("python -m benchmarks.review", argv, {str(args.data): "DATA"})
    prov = run_provenance(command)
    pl, up = np.array(per_label), np.array(updates)
    lines = [f"{REVIEW_HEADING} ({key}, {len(index)} sentences, learned:default)", "",
             f"Made by `{command}` on {prov['date'][:16]} UTC (the shared 2-core machine under load from other work; "
             "wall seconds).", "",
             "| what | mean | 95th percentile | worst |", "|---|---:|---:|---:|",
             f"| first continuous order (ranking, features, state; once per term) | {first:.2f} s | | |",
             f"| a label in continuous mode: store write + refit + re-rank of the rest + estimate ({len(pl)} labels) "
             f"| {pl.mean() * 1000:.1f} ms | {np.quantile(pl, 0.95) * 1000:.1f} ms | {pl.max() * 1000:.1f} ms |",
             f"| of which the update (refit, re-rank, estimate) | {up.mean() * 1000:.1f} ms "
             f"| {np.quantile(up, 0.95) * 1000:.1f} ms | {up.max() * 1000:.1f} ms |"]
    if explain:
        rest = np.array(explain[1:]) if len(explain) > 1 else np.array(explain)
        lines.append(f"| explain with learned:default, first sentence | {explain[0]:.2f} s | | |")
        lines.append(f"| explain with learned:default, next {len(rest)} sentences | {rest.mean():.2f} s "
                     f"| {np.quantile(rest, 0.95):.2f} s | {rest.max():.2f} s |")
    lines += ["", "Target (issue 26): a label's re-rank <= 300 ms for a ~600-sentence term; an explanation "
              "<= 0.5 s per sentence."]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.markdown:
        write_section(ROOT / "benchmarks" / "RESULTS.md", REVIEW_HEADING, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
