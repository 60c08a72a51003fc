"""Time one warm evaluation (open + prepare + evaluate) of the methods that need no word vectors.

Used to compare two checkouts of statinterp on the same machine (each installed in its own
environment, each with its own cache folder filled by a first, cold run)::

    STATINTERP_CACHE=CACHE_A python benchmarks/warm_eval.py ../shared/data/statutory_interpretation

Prints one JSON line: wall and CPU seconds of preparing and of evaluating.
"""

from __future__ import annotations

import json
import sys
import time

#: The 31 methods of the "methods without word vectors" rows of RESULTS.md.
METHODS = ["Random", "TF-ISF", "BM25", "QLLM", "TF-ISF-c", "TF-ISF-o", "TF-ISF-p", "TF-ISF-r", "BM25-c", "BM25-o",
           "BM25-p", "BM25-r", "QLLM-c", "QLLM-o", "QLLM-p", "QLLM-r", "TF-ISF-g", "BM25-g", "QLLM-g", "NW", "NWR",
           "Tp-Tg", "Tp-Nr", "Tp-Tg-Nr", "Bp-Tg", "Bp-Nr", "Bp-Tg-Nr", "Qc-Tg", "Qc-Nr", "Qc-Tg-Nr", "BM25-r+Tg+Nr"]


def main(argv: list[str] | None = None) -> int:
    from statinterp import build_method, evaluate_methods, open_corpus, prepare_corpus

    data = (argv if argv is not None else sys.argv[1:])[0]
    t0, c0 = time.perf_counter(), time.process_time()
    prepared = prepare_corpus(open_corpus(data))
    t1, c1 = time.perf_counter(), time.process_time()
    evaluate_methods(prepared, [build_method(m) for m in METHODS])
    t2, c2 = time.perf_counter(), time.process_time()
    print(json.dumps({"prepare_wall": t1 - t0, "prepare_cpu": c1 - c0, "eval_wall": t2 - t1, "eval_cpu": c2 - c1}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
