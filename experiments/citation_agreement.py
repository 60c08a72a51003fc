"""eyecite's citations against the learned features' regexes: how far they agree, and what
switching the learned ranker's case-citation columns to eyecite does to its leave-one-term-out
figures (issue 17).

    python -m experiments.citation_agreement --data ../shared/data/statutory_interpretation \
        --out reports/citation_agreement.md --force

Writes the report (and its figures as JSON beside it, ``.json``) with the command and the
library versions (:mod:`statinterp.provenance`); by default to ``experiment-results/``, to the
committed ``reports/`` only with ``--force``.

**1. Agreement.** For every labelled sentence of every term (and for its paragraph): does it
cite a statute, a case, the term's own provision? -- once by the regexes
(:mod:`statinterp.learned.sentence_patterns`: ``cites_statute``, ``cites_case``,
``cites_provision``), once by eyecite (:func:`statinterp.text.citations.find_citations`: a
statute citation; full and short case citations as the collection stores them, and with ``Id.``
/ ``supra`` as well -- the definition of the features' ``case_citations="eyecite"``; a statute
citation whose section is the provision's). Reported: the 2×2 counts, agreement, Cohen's kappa,
and the mean gain of the sentences each method flags.

**2. Leave-one-term-out.** The ``ensemble`` learner, each term held out in turn (trained on the
other 13, the same folds for both sources), once with the regex case columns (``case``,
``par_case``, ``case_cite_share``) and once with eyecite's; every other column is the same.
(a) the shipped default model's features: every default family but word vectors
(:data:`statinterp.learned.feedback.FEEDBACK_FEATURES`, ``reports/feedback.md`` section 1);
(b) every default family with the domain word vectors (``statinterp cv``, ``reports/learned.md``).
(b) needs the trained word2vec vectors in the statinterp cache; without them it is left out
(``--train-vectors`` trains them: ~25 min). Per-term nDCG@10 / nDCG@100, macro averages and a
paired Wilcoxon test across terms (:func:`statinterp.evaluation.metrics.paired_test`).
The features are extracted once per setting; the eyecite matrix is the regex matrix with the
three case columns replaced (the families are extracted independently and the citation columns
are not standardised, so this is the matrix :func:`~statinterp.learned.features.extract_features`
gives with ``case_citations="eyecite"``; ``tests/text/test_citations.py`` checks it).

**Decision rule** (issue 17): eyecite becomes the default source of the case columns only if
neither macro nDCG@10 nor nDCG@100 of (a) and (b) is lower with it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from experiments.common import DEFAULT_DATA, add_output_options, log, out_options, output_path, shown_data

#: The columns of the ``citations`` family that ``case_citations`` switches.
CASE_COLUMNS = ("citations:case", "citations:par_case", "citations:case_cite_share")
SOURCES = ("regex", "eyecite")


# ============================================================================ 1. agreement


def eyecite_flags(text: str, section: str) -> dict[str, bool]:
    from statinterp.text.citations import CASE_KINDS, cached_citations

    found = cached_citations(text)
    kinds = {c.kind for c in found}
    provision = bool(section) and any(c.kind == "statute" and c.section.split("(")[0] == section for c in found)
    return {"statute": "statute" in kinds, "case": "case" in kinds, "case_all": bool(kinds & set(CASE_KINDS)),
            "provision": provision}


def regex_flags(text: str, citation: str) -> dict[str, bool]:
    from statinterp.learned.sentence_patterns import cites_case, cites_provision, cites_statute

    sec, full = cites_provision(text, citation) if citation else (False, False)
    return {"statute": cites_statute(text), "case": cites_case(text), "provision": bool(sec or full)}


def kappa(a: int, b: int, c: int, d: int) -> float:
    """Cohen's kappa of a 2×2 table [[both, regex only], [eyecite only, neither]]."""
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def agreement(corpus) -> tuple[int, list[dict]]:
    """The rows of the agreement table (and how many labelled sentences were compared)."""
    from statinterp.learned.sentence_patterns import citation_parts

    rows = []
    for term in corpus:
        citation = term.provision.citation if term.provision is not None else ""
        section = citation_parts(citation)[2]
        for s in term.sentences:
            if s.gain is None:
                continue
            para = term.paragraphs[s.paragraph_id].text
            rows.append((s.gain, regex_flags(s.text, citation), eyecite_flags(s.text, section),
                         regex_flags(para, citation), eyecite_flags(para, section)))
    table = []
    for unit, (ri, ei) in (("sentence", (1, 2)), ("paragraph", (3, 4))):
        for sig, esig in (("statute", "statute"), ("case", "case"), ("case", "case_all"), ("provision", "provision")):
            a = sum(1 for r in rows if r[ri][sig] and r[ei][esig])
            b = sum(1 for r in rows if r[ri][sig] and not r[ei][esig])
            c = sum(1 for r in rows if not r[ri][sig] and r[ei][esig])
            d = len(rows) - a - b - c

            def mean(flags: list[bool]) -> tuple[float | None, int]:
                g = [r[0] for r, f in zip(rows, flags, strict=True) if f]
                return (sum(g) / len(g) if g else None), len(g)

            by_regex = [r[ri][sig] for r in rows]
            by_eyecite = [r[ei][esig] for r in rows]
            by_neither = [not x and not y for x, y in zip(by_regex, by_eyecite, strict=True)]
            table.append({"unit": unit, "signal": sig if esig == sig else f"{sig} (eyecite with Id./supra)",
                          "both": a, "regex_only": b, "eyecite_only": c, "neither": d,
                          "agreement": (a + d) / len(rows), "kappa": kappa(a, b, c, d),
                          "mean_gain_regex": mean(by_regex), "mean_gain_eyecite": mean(by_eyecite),
                          "mean_gain_neither": mean(by_neither)})
    return len(rows), table


# ============================================================================ 2. leave-one-term-out


def source_features(indices: dict, settings) -> tuple[dict[str, dict], dict[str, float]]:
    """Per source, each term's feature matrix under ``settings`` with that source of the case
    columns; and the seconds the ``citations`` family took per source (eyecite's memo emptied
    first, so its time is a first extraction's)."""
    from statinterp.learned.features import FeatureSettings, extract_features
    from statinterp.text.citations import cached_citations

    base = settings.to_dict()
    t = time.perf_counter()
    full = {k: extract_features(ix, FeatureSettings.from_dict({**base, "case_citations": "regex"}))
            for k, ix in indices.items()}
    log(f"features ({len(next(iter(full.values())).names)} columns): {time.perf_counter() - t:.0f} s")
    out: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    for source in SOURCES:
        only = FeatureSettings.from_dict({**base, "families": ["citations"], "case_citations": source})
        cached_citations.cache_clear()
        t = time.perf_counter()
        cites = {k: extract_features(ix, only) for k, ix in indices.items()}
        seconds[source] = time.perf_counter() - t
        log(f"citations family, {source}: {seconds[source]:.1f} s")
        out[source] = {}
        for k, fm in full.items():
            X = fm.X.copy()
            for name in CASE_COLUMNS:
                X[:, fm.names.index(name)] = cites[k].column(name)
            out[source][k] = type(fm)(X, list(fm.names), list(fm.families), dict(fm.skipped))
    return out, seconds


def loo(prepared, settings, feats: dict[str, dict]) -> dict[str, dict]:
    """Leave-one-term-out of the ensemble with each source's matrices: per source, the per-term
    and macro figures of ``learned:ensemble``."""
    from statinterp.learned.crossval import cross_validate
    from statinterp.learned.features import FeatureSettings

    out = {}
    for source in SOURCES:
        s = FeatureSettings.from_dict({**settings.to_dict(), "case_citations": source})
        res = cross_validate(prepared, s, ("ensemble",), "loo", importance=False, compounds=[],
                             features=feats[source])
        out[source] = {"per_term": res.per_term["learned:ensemble"], "macro": res.macro["learned:ensemble"],
                       "n_features": res.n_features, "folds": [f.test for f in res.folds]}
        log(f"leave-one-term-out, {source}: " + ", ".join(f"{m} {v:.4f}" for m, v in out[source]["macro"].items()))
    return out


def compare(run: dict[str, dict]) -> dict:
    """eyecite minus regex: per metric the macro figures, the paired test and better/worse terms."""
    from statinterp.evaluation.metrics import paired_test

    reg, eye = run["regex"]["per_term"], run["eyecite"]["per_term"]
    out = {}
    for m in run["regex"]["macro"]:
        a = {t: eye[t][m] for t in eye}
        b = {t: reg[t][m] for t in reg}
        test = paired_test(a, b)
        out[m] = {"regex": run["regex"]["macro"][m], "eyecite": run["eyecite"]["macro"][m],
                  "mean_diff": test.mean_diff, "wilcoxon_p": test.wilcoxon_p, "ttest_p": test.ttest_p,
                  "better": sum(a[t] > b[t] for t in a), "worse": sum(a[t] < b[t] for t in a)}
    return out


def vectors_cached(prepared) -> bool:
    """Whether the domain word2vec vectors of ``prepared`` are trained and cached (no training)."""
    provider = getattr(next(iter(prepared)), "vectors", None)
    return provider is not None and provider.source("word2vec") is not None


# ============================================================================ report


def _gain(v: tuple[float | None, int]) -> str:
    return f"{v[0]:.2f} ({v[1]})" if v[0] is not None else "-"


def _p(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


def report(command: str, provenance: dict, n_terms: int, n_rows: int, table: list[dict], studies: dict,
           decision: dict) -> str:
    from statinterp.provenance import provenance_lines

    lines = ["# Citations: eyecite against the learned features' regexes (issue 17)", "", "Produced by:", "", "```",
             command, "```", "",
             f"- Date: {provenance['date']}; {n_terms} labelled terms, {n_rows} labelled sentences.",
             *provenance_lines(provenance),
             f"- eyecite {provenance['eyecite']}. What is measured and how: `experiments/citation_agreement.py` "
             "(module docstring); eyecite's citations come from `statinterp.text.citations` (the module ingest "
             "and the features use).", "",
             "## 1. Agreement", "",
             "| unit | signal | both | regex only | eyecite only | neither | agreement | kappa | "
             "mean gain: regex flags | eyecite flags | neither flags |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['unit']} | {r['signal']} | {r['both']} | {r['regex_only']} | {r['eyecite_only']} | "
                     f"{r['neither']} | {r['agreement']:.1%} | {r['kappa']:.2f} | {_gain(r['mean_gain_regex'])} | "
                     f"{_gain(r['mean_gain_eyecite'])} | {_gain(r['mean_gain_neither'])} |")
    lines += ["", "Gains: high value 3, certain value 2, potential value 1, no value 0; in brackets, how many "
              "sentences. The regex for statutes also fires on any 'Act', 'Code' or 'section N' (no citation "
              "needed); eyecite's statute citation needs a full citation (title, code, section). For the case "
              "signal eyecite with Id./supra agrees well with the regex and its flags carry a higher mean gain; "
              "for statutes and the provision the two are different signals (low kappa, equal mean gain), so the "
              "features keep the regexes there and only the case columns can switch.", "",
              "## 2. Leave-one-term-out: regex or eyecite case columns", "",
              "The `ensemble` learner, each term held out in turn (trained on the other "
              f"{n_terms - 1}; the same folds and seed for both), with the case columns `case`, `par_case` and "
              "`case_cite_share` from the regexes or from eyecite (full and short case citations, Id., supra; "
              "`case_cite_share`: the share of the sentence inside the citations' full spans); every other column "
              "is the same. Paired tests across terms: eyecite minus regex, two-sided Wilcoxon signed-rank "
              "(`statinterp.evaluation.metrics.paired_test`); better / worse: terms.", ""]
    for study in studies.values():
        lines += [f"### {study['title']}", "", study["what"], ""]
        if study.get("skipped"):
            lines += [f"Not measured: {study['skipped']}", ""]
            continue
        cmp = study["comparison"]
        lines += [f"{study['n_features']} features. Time of the `citations` family over the {n_terms} terms "
                  f"(first extraction): regex {study['seconds']['regex']:.1f} s, eyecite "
                  f"{study['seconds']['eyecite']:.1f} s.", "",
                  "| metric | regex | eyecite | mean difference | better / worse | Wilcoxon p | t-test p |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for m, c in cmp.items():
            lines.append(f"| {m} | {c['regex']:.4f} | {c['eyecite']:.4f} | {c['mean_diff']:+.4f} | "
                         f"{c['better']} / {c['worse']} | {_p(c['wilcoxon_p'])} | {_p(c['ttest_p'])} |")
        metrics = list(cmp)
        lines += ["", "| term | " + " | ".join(f"{m} regex | eyecite | change" for m in metrics) + " |",
                  "|---|" + "---:|---:|---:|" * len(metrics)]
        reg, eye = study["runs"]["regex"]["per_term"], study["runs"]["eyecite"]["per_term"]
        for t in sorted(reg):
            lines.append(f"| {t.replace('_', ' ')} | " + " | ".join(
                f"{reg[t][m]:.4f} | {eye[t][m]:.4f} | {eye[t][m] - reg[t][m]:+.4f}" for m in metrics) + " |")
        lines.append("")
    lines += ["## Decision", "", decision["text"], ""]
    return "\n".join(lines)


def decide(studies: dict) -> dict:
    """The issue's rule: eyecite becomes the default only if no macro figure of any study is lower."""
    measured = {k: s for k, s in studies.items() if not s.get("skipped")}
    drops = [f"({k}) {m} {c['regex']:.4f} → {c['eyecite']:.4f}"
             for k, s in measured.items() for m, c in s["comparison"].items() if c["eyecite"] < c["regex"]]
    rises = [f"({k}) {m} {c['regex']:.4f} → {c['eyecite']:.4f}"
             for k, s in measured.items() for m, c in s["comparison"].items() if c["eyecite"] >= c["regex"]]
    adopt = len(measured) == len(studies) and not drops
    tests = [c for s in measured.values() for c in s["comparison"].values()]
    size = (f" The changes are small against the spread across terms: the largest macro change is "
            f"{max(abs(c['mean_diff']) for c in tests):.4f}, the smallest Wilcoxon p "
            f"{min(c['wilcoxon_p'] for c in tests):.3f}.") if tests else ""
    if adopt:
        text = ("No macro figure is lower with eyecite's case columns (" + "; ".join(rises) + "): eyecite (with "
                "Id./supra) becomes the default source of the case columns (`FeatureSettings.case_citations = "
                "\"eyecite\"`); the regexes stay available (`--case-citations regex`), and a model saved before the "
                "setting existed keeps the regex columns it was trained with." + size)
    elif drops:
        text = ("Some macro figures are lower with eyecite's case columns (" + "; ".join(drops) + "; higher or "
                "equal: " + ("; ".join(rises) or "none") + "), so by the issue's rule the regexes stay the default "
                "source of the case columns (`FeatureSettings.case_citations = \"regex\"`); eyecite is one "
                "setting away (`statinterp train` / `cv --case-citations eyecite`, recorded in the model file)."
                + size)
    else:
        text = ("Not every study was measured (" + "; ".join(f"({k}) {s['skipped']}" for k, s in studies.items()
                                                         if s.get("skipped"))
                + "), so the rule cannot adopt eyecite: the regexes stay the default source of the case columns.")
    return {"adopt_eyecite": adopt, "drops": drops, "text": text}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.citation_agreement", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache-dir", type=Path, default=None, help="statinterp cache folder (default: statinterp's)")
    add_output_options(ap, "citation_agreement")
    ap.add_argument("--no-loo", action="store_true", help="only the agreement table (no leave-one-term-out)")
    ap.add_argument("--train-vectors", action="store_true",
                    help="train the domain word vectors for (b) when they are not cached (~25 min)")
    args = ap.parse_args(argv)
    out = output_path(args, "citation_agreement")
    logging.getLogger("eyecite").setLevel(logging.ERROR)
    from importlib.metadata import version

    from statinterp.cache import files as atomic
    from statinterp.learned.features import FeatureSettings
    from statinterp.learned.feedback import FEEDBACK_FEATURES
    from statinterp.provenance import report_json, run_provenance
    from statinterp.workflow import open_corpus, prepare_corpus

    started = time.perf_counter()
    corpus = open_corpus(args.data)
    n_rows, table = agreement(corpus)
    log(f"agreement: {n_rows} labelled sentences")
    studies: dict[str, dict] = {
        "a": {"title": "(a) The shipped default model's features: no word vectors",
              "what": "Every default family but word vectors (`statinterp.learned.feedback.FEEDBACK_FEATURES`, the "
                      "recipe of `data/models/default.statinterp-model`); the regex row is section 1 of "
                      "`reports/feedback.md`.",
              "settings": FEEDBACK_FEATURES},
        "b": {"title": "(b) Every default family with word vectors",
              "what": "`statinterp cv`'s default features (`FeatureSettings()`, with the domain word2vec vectors "
                      "from the statinterp cache); the regex row is what the `learned:ensemble` row of "
                      "`reports/learned.md` measures (that report's figures come from its own run's vectors and "
                      "cache; both rows here use the same vectors, so the comparison is paired).",
              "settings": FeatureSettings(vectors="auto")},
    }
    if args.no_loo:
        studies = {}
    else:
        prepared = prepare_corpus(corpus, cache_dir=args.cache_dir, show_progress=True)
        indices = {ix.key: ix for ix in prepared if ix.term.labelled}
        for key, study in studies.items():
            if key == "b" and not args.train_vectors and not vectors_cached(prepared):
                study["skipped"] = ("the domain word2vec vectors are not in the statinterp cache (train them with "
                                    "`statinterp cv` or pass `--train-vectors`).")
                log(f"{study['title']}: {study['skipped']}")
                continue
            log(study["title"])
            feats, seconds = source_features(indices, study["settings"])
            study["runs"] = loo(prepared, study["settings"], feats)
            study["n_features"] = study["runs"]["regex"]["n_features"]
            study["seconds"] = seconds
            study["comparison"] = compare(study["runs"])
    decision = decide(studies) if studies else {"adopt_eyecite": False, "drops": [], "text": "Not measured (--no-loo)."}

    command = f"python -m experiments.citation_agreement --data {shown_data(args.data)}"
    if args.no_loo:
        command += " --no-loo"
    if args.train_vectors:
        command += " --train-vectors"
    command += out_options(args, out)
    provenance = run_provenance(command, eyecite=version("eyecite"), run_minutes=(time.perf_counter() - started) / 60)
    text = report(command, provenance, len(corpus), n_rows, table, studies, decision)
    print(text)
    doc = {"provenance": provenance, "labelled_sentences": n_rows, "agreement": table,
           "studies": {k: {kk: (vv.to_dict() if kk == "settings" else vv) for kk, vv in s.items()}
                       for k, s in studies.items()},
           "decision": decision}
    atomic.write_set({out: text, out.with_suffix(".json"): report_json(doc, indent=2, default=str)},
                     force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
