"""What the research studies in ``experiments/`` share: paths, logging, a term's labelled
candidates with their features, and the leave-one-term-out ensemble fit.

Studies (not speed benchmarks, which live in ``benchmarks/``) are run from the repository root,
e.g. ``python -m experiments.learned_limits --data ../shared/data/statutory_interpretation``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: Where a study writes by default: a folder no clone commits (.gitignore), so a newcomer's run
#: never overwrites a committed report.
RESULTS = ROOT / "experiment-results"
#: The committed reports: a study writes here only when ``--out`` names it and ``--force`` is given.
REPORTS = ROOT / "reports"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "statutory_interpretation"
MASK = " targetterm "


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Term:
    """One term's candidates: features, gains (NaN: unlabelled), tie-break ids, term-masked texts."""

    def __init__(self, index, features):
        from statinterp.learned.sentence_patterns import term_pattern

        self.key = index.key
        self.query = index.term.query
        self.X = features.X
        self.gains = np.asarray(index.gains, dtype=np.float64)
        self.labelled = ~np.isnan(self.gains)
        self.ids = index.sentence_ids.astype(str)
        self.texts = [s.text for s in index.sentences]
        rx = term_pattern(self.query)
        self.masked = [rx.sub(MASK, t) for t in self.texts]


def load_terms(data: Path, cache_dir: Path | None, settings):
    """Prepare the corpus at ``data`` and extract the features of each labelled term.

    Returns ``(prepared, terms, (names, families))``: the prepared corpus, a :class:`Term` per
    labelled term key, and the feature column names and families (the same for every term).
    """
    from statinterp.learned.features import extract_features
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(data), cache_dir=cache_dir, show_progress=True)
    terms: dict[str, Term] = {}
    columns: tuple[list[str], list[str]] = ([], [])
    for index in prepared:
        if index.term.labelled:
            log(f"features of {index.key}")
            fm = extract_features(index, settings)
            columns = (fm.names, fm.families)
            terms[index.key] = Term(index, fm)
    return prepared, terms, columns



def term_sample_weights(train: list[Term]) -> np.ndarray:
    """Each training term counts equally, as in the learned ranker's pointwise learners (mean 1)."""
    from statinterp.learned.model import term_weights

    return term_weights([t.gains[t.labelled] for t in train])


def fit_ensemble(train: list[Term], test: Term, settings, names, families) -> np.ndarray:
    from statinterp.learned.features import FeatureMatrix
    from statinterp.learned.model import fit_matrices

    mats = [FeatureMatrix(t.X, names, families, {}) for t in train]
    model = fit_matrices(mats, [t.gains for t in train], [t.key for t in train], settings, "ensemble", 0)
    return model.score_matrix(test.X)



def shown_data(data: Path) -> str:
    """``data`` as a command line should show it: relative to the repository for the shared data
    (wherever the checkout is: a worktree's shared data is not beside it), any other folder as
    ``DATA``, so no machine's path is recorded (the studies' and benchmarks' one home for this)."""
    shared = ("shared", "data", "statutory_interpretation")
    resolved = Path(data).resolve()
    return "../" + "/".join(shared) if resolved == DEFAULT_DATA.resolve() or resolved.parts[-3:] == shared \
        else "DATA"


def add_output_options(ap: argparse.ArgumentParser, name: str, *aliases: str) -> None:
    """The options every study has for where its report goes: ``--out`` (a ``.md`` file, its
    ``.json`` beside it, or a folder for ``NAME.md``) and ``--force`` (needed to write into the
    committed ``reports/``). Resolve them with :func:`output_path`."""
    ap.add_argument("--out", *aliases, dest="out", default=None, metavar="FILE_OR_DIR",
                    help=f"the Markdown report (its .json beside it), or a folder for {name}.md "
                         f"(default: experiment-results/{name}.md, which no clone commits); "
                         "the committed reports/ needs --force")
    ap.add_argument("--force", action="store_true",
                    help="allow --out to overwrite a committed report under reports/")


def output_path(args: argparse.Namespace, name: str) -> Path:
    """The report file the options of :func:`add_output_options` name: ``--out`` as given (a folder,
    an existing one or one with no suffix, gets ``NAME.md``), else ``experiment-results/NAME.md``.
    Writing under ``reports/`` without ``--force`` is refused in one line, exit 2, before any work."""
    out = Path(args.out) if args.out is not None else RESULTS
    if out.is_dir() or not out.suffix or str(args.out or "").endswith(("/", "\\")):
        out = out / f"{name}.md"
    if out.resolve().is_relative_to(REPORTS.resolve()) and not args.force:
        print(f"error: --out {args.out}: reports/ holds the committed reports; write elsewhere (the default is "
              f"experiment-results/) or add --force to overwrite {out.name}", file=sys.stderr)
        raise SystemExit(2)
    return out


def out_options(args: argparse.Namespace, out: Path) -> str:
    """The ``--out``/``--force`` part of the command a report records (empty for the default place):
    the path relative to the repository when it is inside it, so the command reproduces the file."""
    if args.out is None:
        return ""
    shown = out.resolve().relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out
    return f" --out {shown.as_posix() if isinstance(shown, Path) else shown}" + (" --force" if args.force else "")
