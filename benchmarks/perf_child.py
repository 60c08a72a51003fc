"""One measured run in a fresh process; prints one JSON line with its timings (used by ``run.py``).

Every figure of ``benchmarks/run.py`` that involves a whole pipeline comes from a fresh process,
so that nothing warm in memory (spaCy's string store, memoised lemmas, imported modules'
caches) helps the next run, and so that the peak memory of each run is its own. Imports are
done before the clock starts in every mode.

Modes (``python -m benchmarks.perf_child MODE --help``):

``floor``   one bare spaCy pass (``build_pipeline()``, sentence segmentation included) over
            every distinct case text with ``nlp.pipe``;
``full``    open the corpus, ``prepare_corpus`` with a given cache folder, evaluate methods;
``growth``  rank a synthetic corpus of N sentences with paragraph and case context;
``train``   train word2vec / fastText with statinterp and with gensim directly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time


def _vm_hwm_mb() -> float:
    """This process's peak resident set (VmHWM). Unlike ``ru_maxrss``, which Linux carries over
    ``execve`` from the parent, it belongs to this program alone."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _usage() -> dict:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu_self": me.ru_utime + me.ru_stime,
        "cpu_children": kids.ru_utime + kids.ru_stime,
        "maxrss_self_mb": _vm_hwm_mb(),
        # worker processes are forked, not exec'd: their ru_maxrss starts at this process's size
        "maxrss_children_mb": kids.ru_maxrss / 1024,
    }


def _emit(result: dict) -> None:
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------------------------


def floor(args) -> None:
    from statinterp.text.segmentation import build_pipeline
    from statinterp.workflow import open_corpus

    corpus = open_corpus(args.data, terms=args.terms or None)
    texts = list(dict.fromkeys(c.text for t in corpus for c in t.cases.values()))
    nlp = build_pipeline()
    before = _usage()
    start = time.perf_counter()
    tokens = 0
    for doc in nlp.pipe(texts):
        tokens += len(doc)
    wall = time.perf_counter() - start
    after = _usage()
    _emit({"mode": "floor", "wall": wall, "cpu": after["cpu_self"] - before["cpu_self"], "texts": len(texts),
           "chars": sum(map(len, texts)), "tokens": tokens, "maxrss_mb": after["maxrss_self_mb"]})


def full(args) -> None:
    from statinterp.workflow import evaluate_methods, open_corpus, prepare_corpus

    methods = [m for m in args.methods.split(",") if m]
    n_process = None if args.n_process == "auto" else int(args.n_process)
    before = _usage()
    start = time.perf_counter()
    corpus = open_corpus(args.data, terms=args.terms or None)
    loaded = time.perf_counter()
    prepared = prepare_corpus(corpus, cache_dir=args.cache, n_process=n_process)
    ready = time.perf_counter()
    per_method = {}
    results = []
    for name in methods:
        t = time.perf_counter()
        results.extend(evaluate_methods(prepared, [name]))
        per_method[name] = time.perf_counter() - t
    end = time.perf_counter()
    after = _usage()
    digest = hashlib.sha256()
    for res in results:
        digest.update(json.dumps([res.method, res.per_term], sort_keys=True).encode())
    _emit({
        "mode": "full", "wall": end - start, "wall_load": loaded - start, "wall_prepare": ready - loaded,
        "wall_evaluate": end - ready, "per_method": per_method,
        "cpu": after["cpu_self"] - before["cpu_self"] + after["cpu_children"] - before["cpu_children"],
        "cpu_self": after["cpu_self"] - before["cpu_self"],
        "maxrss_mb": after["maxrss_self_mb"], "maxrss_workers_mb": after["maxrss_children_mb"],
        "results_sha256": digest.hexdigest(), "methods": len(methods),
        "macro": {r.method: r.macro for r in results},
    })


def growth(args) -> None:
    from benchmarks.synthetic import build_synthetic, rank_all

    setup = time.perf_counter()
    index, info = build_synthetic(args.sentences, args.profile, seed=args.seed)
    built = time.perf_counter()
    timings = rank_all(index)
    after = _usage()
    _emit({"mode": "growth", "sentences": args.sentences, "build_wall": built - setup, "rank": timings,
           "rank_wall": sum(timings.values()), "maxrss_mb": after["maxrss_self_mb"], **info})


def train(args) -> None:
    import logging

    from benchmarks.training import run_training

    logging.disable(logging.CRITICAL)
    _emit({"mode": "train", **run_training(args.corpus, args.kind, args.impl, args.workers, args.epochs,
                                           args.bucket)})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf_child")
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("floor")
    p.add_argument("--data", required=True)
    p.add_argument("--terms", nargs="*")
    p = sub.add_parser("full")
    p.add_argument("--data", required=True)
    p.add_argument("--terms", nargs="*")
    p.add_argument("--cache", required=True)
    p.add_argument("--methods", required=True)
    p.add_argument("--n-process", default="auto")
    p = sub.add_parser("growth")
    p.add_argument("--sentences", type=int, required=True)
    p.add_argument("--profile", required=True, help="the .npz of real distributions written by run.py")
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("train")
    p.add_argument("--corpus", required=True, help="token sentences, one per line, tokens separated by spaces")
    p.add_argument("--kind", choices=["word2vec", "fasttext"], required=True)
    p.add_argument("--impl", choices=["statinterp", "gensim"], required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--bucket", type=int, default=200_000)
    args = parser.parse_args(argv)
    {"floor": floor, "full": full, "growth": growth, "train": train}[args.mode](args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
