"""Performance benchmarks of statinterp (issue 4); writes ``benchmarks/RESULTS.md``.

Run from the project root::

    python -m benchmarks.run            # everything, 3 runs each (long)
    python -m benchmarks.run --quick    # 1 run, 3 terms, small sizes (minutes)

Figures (each the median of several runs; per-run values are kept in RESULTS.json):

1. **Floor ratio**: wall time of the full evaluation of the registered methods on the terms
   with a *cold* cache (a fresh, empty cache folder: no analysis, no prepared corpus) divided by
   the wall time of one bare spaCy pass (``statinterp.text.segmentation.build_pipeline()``, sentence
   segmentation included, ``nlp.pipe`` over every distinct case text). The evaluation run
   counts everything from opening the corpus to the last metric (imports excluded on both
   sides); the floor counts only the ``nlp.pipe`` loop. Each run is a fresh process.
2. **Warm ratio**: the same evaluation with the cache filled by the cold run, divided by the
   cold run's time (same repetition).
3. **BM25 vs rank_bm25** (see ``benchmarks/bm25_peer.py``).
4. **Growth**: scoring and ordering synthetic corpora of 10k, 100k and 1M sentences with nine
   lexical rankers (plain, -p, -c), one fresh process per size for its peak memory.
5. **Embedding training throughput**: words/s of statinterp's ``train_vectors`` vs gensim
   directly (skip-gram, 300 d), 1 and 2 workers.

Methods "needing vectors" are run only when their vectors are available: the domain vectors
(``w2vec*``, ``fastt*``) are trained once into ``WORKDIR/vectors`` (or read from there) and
that folder is linked into every cold cache, so "cold" means a cold *analysis* cache;
pretrained vectors (``w2vec``, ``GloVe``, ``fastt``) are not available here and their methods
are skipped (listed in the results).

The machine is shared: other work competes for the two cores, so wall times are noisy.
Runs are interleaved (floor, cold, warm, floor, cold, warm, ...) so that load changes hit both
sides of a ratio; the load average is recorded; CPU seconds are reported beside wall seconds.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.results_file import keep_sections, shown_command
from statinterp.provenance import provenance_lines

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "statutory_interpretation"

if str(ROOT) not in sys.path:  # run as a file from any folder: python PATH/TO/CLONE/benchmarks/NAME.py
    sys.path.insert(0, str(ROOT))


def shown_data(data: str) -> str:
    """The data folder as the results show it (:func:`experiments.common.shown_data`)."""
    from experiments.common import shown_data as shown

    return shown(Path(data))


QUICK_TERMS = ["semiconductor_chip_product", "mechanical_recordation", "dependent_on_hours_worked"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                pass
    return out


def _pss_mb(pids: list[int]) -> float:
    """Summed proportional set size (shared pages split between the processes sharing them)."""
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            pass
    return total / 1024


def child(*args: str, timeout: float = 6 * 3600) -> dict:
    """Run ``benchmarks.perf_child`` in a fresh process; its RESULT line as a dict, plus
    ``tree_pss_peak_mb``: the largest summed PSS of it and its worker processes, sampled from
    here every 0.25 s (nothing runs inside the measured process for it)."""
    cmd = [sys.executable, "-m", "benchmarks.perf_child", *args]
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + timeout
    peak = 0.0
    while True:
        try:
            stdout, stderr = proc.communicate(timeout=0.25)
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, _pss_mb(_tree(proc.pid)))
            if time.monotonic() > deadline:
                proc.kill()
                raise
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{stderr[-4000:]}")
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            result["tree_pss_peak_mb"] = peak
            return result
    raise RuntimeError(f"no result from {' '.join(cmd)}:\n{stdout[-2000:]}\n{stderr[-2000:]}")


def median(values) -> float:
    return statistics.median(values)


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GB"
    except OSError:
        pass
    from statinterp.provenance import library_versions

    versions = library_versions()
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": platform.platform(),
        "python": platform.python_version(), "numpy": versions["numpy"], "scipy": versions["scipy"],
        "spacy": versions["spacy"], "gensim": versions["gensim"], "versions": versions,
    }


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# --------------------------------------------------------------------------------------------
# Methods and vectors


def select_methods(prepared, vectors_ready: set[str]) -> tuple[list[str], dict[str, str]]:
    """Registered methods that can run here, and the skipped ones with the reason: a method is
    skipped when the word vectors its parts declare (``Ranker.requires``) are not available."""
    from statinterp.rankers.grammar import list_methods, parse

    run, skipped = [], {}
    for name, _ in list_methods():
        missing = [k for k in parse(name).requires().vectors if k not in vectors_ready]
        if missing:
            skipped[name] = "needs vectors " + ", ".join(missing)
            continue
        run.append(name)
    return run, skipped


def ensure_domain_vectors(data: str, terms, workdir: Path, train: bool):
    """Train (once) or find the domain vectors in ``workdir/vector-source/vectors``; returns the
    prepared corpus and the kinds available."""
    from statinterp.vectors.provider import DOMAIN_KINDS
    from statinterp.workflow import open_corpus, prepare_corpus

    cache = workdir / "vector-source"
    corpus = open_corpus(data, terms=terms)
    prepared = prepare_corpus(corpus, cache_dir=cache)
    provider = prepared.vectors  # type: ignore[attr-defined]
    (cache / "vectors").mkdir(parents=True, exist_ok=True)
    ready = set()
    for kind in DOMAIN_KINDS:
        settings = provider.settings[kind]
        if provider.cache is not None and provider.cache.get(provider.corpus_hash, settings) is not None:
            ready.add(kind)
        elif train:
            log(f"training domain {kind} vectors once (cached in {cache / 'vectors'}) ...")
            start = time.perf_counter()
            provider.get(kind)
            log(f"  trained in {time.perf_counter() - start:.0f} s")
            ready.add(kind)
    return prepared, ready


# --------------------------------------------------------------------------------------------
# 1 + 2: floor, cold and warm


def floor_and_warm(data: str, terms, workdir: Path, variants: list[dict], repeats: int) -> dict:
    """Interleaved repetitions: the floor, then per variant a cold run (fresh cache folder) and a
    warm run (the folder it filled); for the first variant also a warm run with the analysis
    cache only (the prepared-corpus file removed)."""
    term_args = ["--terms", *terms] if terms else []
    runs: list[dict] = []
    vector_dir = workdir / "vector-source" / "vectors"
    for rep in range(repeats):
        row: dict = {"loadavg_start": loadavg()}
        log(f"repetition {rep + 1}/{repeats}: floor ...")
        row["floor"] = child("floor", "--data", data, *term_args)
        for k, var in enumerate(variants):
            cache = Path(tempfile.mkdtemp(prefix="cold-", dir=workdir))
            if vector_dir.is_dir():
                os.symlink(vector_dir, cache / "vectors")
            args = ["full", "--data", data, *term_args, "--cache", str(cache), "--methods", ",".join(var["methods"]),
                    "--n-process", str(var["n_process"])]
            log(f"  {var['label']}: cold ...")
            row[f"cold:{var['label']}"] = child(*args)
            log(f"  {var['label']}: warm ...")
            row[f"warm:{var['label']}"] = child(*args)
            if k == 0:
                shutil.rmtree(cache / "prepared", ignore_errors=True)
                log(f"  {var['label']}: warm, analysis cache only (prepared-corpus cache removed) ...")
                row["warm_analysis_only"] = child(*args)
            shutil.rmtree(cache, ignore_errors=True)
        row["loadavg_end"] = loadavg()
        runs.append(row)
        log(f"  floor {row['floor']['wall']:.1f} s; " + "; ".join(
            f"{k} {v['wall']:.1f} s" for k, v in row.items() if isinstance(v, dict) and k != "floor"))
    identical = {}
    for var in variants:
        digests = {r[f"{kind}:{var['label']}"]["results_sha256"] for r in runs for kind in ("cold", "warm")}
        if var is variants[0]:
            digests |= {r["warm_analysis_only"]["results_sha256"] for r in runs}
        identical[var["label"]] = len(digests) == 1
    return {"runs": runs, "identical_results": identical,
            "variants": [{k: v for k, v in var.items()} for var in variants]}


def summarise_floor(fw: dict) -> dict:
    runs = fw["runs"]
    out: dict = {"floor_wall": median(r["floor"]["wall"] for r in runs),
                 "floor_cpu": median(r["floor"]["cpu"] for r in runs), "variants": {}}
    for var in fw["variants"]:
        label = var["label"]
        cold = [r[f"cold:{label}"] for r in runs]
        warm = [r[f"warm:{label}"] for r in runs]
        v = {"cold_wall": median(c["wall"] for c in cold), "cold_cpu": median(c["cpu"] for c in cold),
             "warm_wall": median(w["wall"] for w in warm), "warm_cpu": median(w["cpu"] for w in warm),
             "floor_ratio_paired": median(r[f"cold:{label}"]["wall"] / r["floor"]["wall"] for r in runs),
             "warm_ratio": median(r[f"warm:{label}"]["wall"] / r[f"cold:{label}"]["wall"] for r in runs),
             "warm_ratio_cpu": median(r[f"warm:{label}"]["cpu"] / r[f"cold:{label}"]["cpu"] for r in runs),
             "peak_rss": max(c["maxrss_mb"] for c in cold + warm),
             "peak_pss_tree": max(c["tree_pss_peak_mb"] for c in cold + warm)}
        v["floor_ratio"] = v["cold_wall"] / out["floor_wall"]
        v["floor_ratio_cpu"] = v["cold_cpu"] / out["floor_cpu"]
        for part in ("wall_load", "wall_prepare", "wall_evaluate"):
            v[f"cold_{part}"] = median(c[part] for c in cold)
            v[f"warm_{part}"] = median(w[part] for w in warm)
        for which, group in (("cold", cold), ("warm", warm)):
            per_method: dict[str, list[float]] = {}
            for c in group:
                for name, t in c["per_method"].items():
                    per_method.setdefault(name, []).append(t)
            v[f"per_method_{which}"] = {k: median(t) for k, t in per_method.items()}
        out["variants"][label] = v
    first = fw["variants"][0]["label"]
    out["warm_analysis_only_wall"] = median(r["warm_analysis_only"]["wall"] for r in runs)
    out["warm_analysis_only_ratio"] = median(r["warm_analysis_only"]["wall"] / r[f"cold:{first}"]["wall"]
                                             for r in runs)
    return out


# --------------------------------------------------------------------------------------------
# 4: growth


def growth(data: str, terms, workdir: Path, sizes: list[int]) -> list[dict]:
    from benchmarks.synthetic import write_profile
    from statinterp.workflow import open_corpus, prepare_corpus

    profile = workdir / "profile.npz"
    prepared = prepare_corpus(open_corpus(data, terms=terms), cache_dir=workdir / "vector-source")
    write_profile(prepared, str(profile))
    out = []
    for n in sizes:
        log(f"growth: {n:,} sentences ...")
        res = child("growth", "--sentences", str(n), "--profile", str(profile))
        log(f"  ranked in {res['rank_wall']:.2f} s, peak {res['maxrss_mb']:.0f} MB")
        out.append(res)
    return out


# --------------------------------------------------------------------------------------------
# 5: embedding training


def training(data: str, terms, workdir: Path, max_words: int, epochs: int, repeats: int) -> dict:
    try:
        from statinterp.vectors.embeddings import train_vectors  # noqa: F401
        from statinterp.vectors.provider import fasttext_buckets
    except Exception as exc:  # noqa: BLE001
        return {"pending": f"statinterp.vectors.embeddings.train_vectors is not usable: {exc}"}
    from statinterp.workflow import open_corpus, prepare_corpus

    corpus = open_corpus(data, terms=terms)
    prepared = prepare_corpus(corpus, cache_dir=workdir / "vector-source")
    sentences = prepared.vectors.sentences()  # type: ignore[attr-defined]
    chars = sum(len(c.text) for c in {c.text: c for t in corpus for c in t.cases.values()}.values())
    bucket = fasttext_buckets(chars)
    path = workdir / "train-corpus.txt"
    words = 0
    with open(path, "w", encoding="utf-8") as fh:
        for s in sentences:
            if not s:
                continue
            fh.write(" ".join(s) + "\n")
            words += len(s)
            if words >= max_words:
                break
    results: list[dict] = []
    for kind in ("word2vec", "fasttext"):
        for workers in (1, 2):
            for rep in range(repeats):
                for impl in ("gensim", "statinterp"):
                    log(f"training {kind} {impl} workers={workers} ({rep + 1}/{repeats}) ...")
                    results.append(child("train", "--corpus", str(path), "--kind", kind, "--impl", impl,
                                         "--workers", str(workers), "--epochs", str(epochs), "--bucket", str(bucket)))
    table = []
    for kind in ("word2vec", "fasttext"):
        for workers in (1, 2):
            sel = [r for r in results if r["kind"] == kind and r["workers"] == workers]
            g = median(r["words_per_second"] for r in sel if r["impl"] == "gensim")
            s = median(r["words_per_second"] for r in sel if r["impl"] == "statinterp")
            gw = median(r["wall"] for r in sel if r["impl"] == "gensim")
            sw = median(r["wall"] for r in sel if r["impl"] == "statinterp")
            table.append({"kind": kind, "workers": workers, "gensim_wps": g, "statinterp_wps": s,
                          "overhead": sw / gw - 1.0})
    return {"words": words, "epochs": epochs, "bucket": bucket, "runs": results, "table": table}


# --------------------------------------------------------------------------------------------
# Report


def fmt_s(x: float) -> str:
    return f"{x:.1f} s" if x >= 10 else f"{x:.2f} s"


def report(res: dict) -> str:
    m = res["machine"]
    lines = ["# statinterp performance results", ""]
    lines += performance_section(res)
    lines += ["", "## Machine and conditions", "",
              f"- Date: {m['date']}; command: `{res['command']}`"
              + (f" (sections not run then are kept from the run of {res['merged_from']})"
                 if res.get("merged_from") else ""),
              f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory']}; {m['os']}",
              *(provenance_lines(m) if m.get("versions") else
                [f"- Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}, spaCy {m['spacy']}, "
                 f"gensim {m['gensim']}"]),
              f"- Load average (1, 5, 15 min) at start / end: {res['loadavg_start']} / {res['loadavg_end']} "
              "(2 cores; other engineers' tests ran concurrently, so wall times are noisy: every figure is "
              "a median, ratios are taken within a repetition, CPU seconds are shown beside wall seconds)",
              f"- Data: {res['data']} ({res['terms_label']})", ""]
    if "floor" in res:
        lines += floor_section(res)
    if "bm25" in res:
        lines += bm25_section(res["bm25"])
    if "growth" in res:
        lines += growth_section(res["growth"])
    if "training" in res:
        lines += training_section(res["training"])
    return "\n".join(lines) + "\n"


def performance_section(res: dict) -> list[str]:
    out = ["## Performance", ""]
    if "floor" in res:
        fw = res["floor"]
        s = fw["summary"]
        for var in fw["variants"]:
            v = s["variants"][var["label"]]
            out.append(
                f"**{var['title']}** ({len(var['methods'])} methods, {res['terms_label']}, {var['processes']}): "
                f"from a cold cache {fmt_s(v['cold_wall'])} against {fmt_s(s['floor_wall'])} for one bare spaCy "
                f"pass over the case texts — **floor ratio {v['floor_ratio']:.2f}** (target ≤ 1.5); with the warm "
                f"cache {fmt_s(v['warm_wall'])} — **warm ratio {v['warm_ratio']:.3f}** (target ≤ 0.1); peak memory "
                f"{v['peak_rss']:.0f} MB resident in the main process, {v['peak_pss_tree']:.0f} MB for all its "
                "processes together (peak summed PSS).")
        worst = sorted(s["variants"][fw["variants"][0]["label"]]["per_method_cold"].items(), key=lambda kv: -kv[1])
        cosine = {f"{b}{x}" for b in ("w2vec*", "fastt*") for x in ("", "-c", "-o", "-p", "-r")}
        emb = sum(t for k, t in worst if k in cosine)
        emb_warm = sum(t for k, t in s["variants"][fw["variants"][0]["label"]]["per_method_warm"].items()
                       if k in cosine)
        out.append(f"Beyond the analysis: the embedding methods `w2vec*`/`fastt*` (with -c/-o/-p/-r) take "
                   f"{fmt_s(emb)} of the cold all-methods run (loading both vector kinds, joining phrases in "
                   "every case and opinion with `statinterp.vectors.embeddings`, summing unit word vectors) and "
                   f"{fmt_s(emb_warm)} of the warm run, which reads the unit directions from the cache "
                   "(`statinterp.cache.namespaces`, which also keeps the WMD distances and the similar words of "
                   "the -e expansion, so a warm run loads no word vectors); see \"Slowest methods\" below.")
    if "bm25" in res:
        b = res["bm25"]
        out.append(
            f"BM25 over {b['sentences']:,} pre-tokenised sentences: statinterp is **{b['speedup_total']:.0f}× faster** "
            f"than rank_bm25 (indexing {b['speedup_index']:.0f}×, scoring {b['speedup_query']:.0f}×), with "
            f"identical rankings for {b['identical_rankings']} of the {b['compared']} queries where the formulas "
            f"agree (of {b['queries']}).")
    if "growth" in res:
        g = res["growth"]
        parts = ", ".join(f"{r['sentences']:,}: {fmt_s(r['rank_wall'])} / {r['maxrss_mb']:.0f} MB" for r in g)
        out.append(f"Ranking synthetic corpora with nine lexical rankers (plain, -p, -c) — sentences: time / "
                   f"peak memory — {parts}.")
    if "training" in res and "table" in res["training"]:
        t = res["training"]["table"]
        parts = "; ".join(f"{r['kind']} {r['workers']} worker{'s' if r['workers'] > 1 else ''}: "
                          f"{r['statinterp_wps'] / 1000:.0f}k words/s ({r['overhead'] * 100:+.1f}% vs gensim)"
                          for r in t)
        out.append(f"Embedding training (skip-gram, 300 d): {parts}.")
    elif "training" in res:
        out.append(f"Embedding training: pending ({res['training']['pending']}).")
    return ["", *[p + "\n" for p in out]] if out else []


def floor_section(res: dict) -> list[str]:
    fw = res["floor"]
    s = fw["summary"]
    runs = fw["runs"]
    f0 = runs[0]["floor"]
    variants = fw["variants"]
    out = ["## 1–2. Floor ratio and warm ratio", "",
           f"Floor: `build_pipeline()` + `nlp.pipe` over {f0['texts']} distinct case texts "
           f"({f0['chars'] / 1e6:.1f} M characters, {f0['tokens']:,} spaCy tokens), one process.",
           "Evaluation run: open the corpus, `prepare_corpus` (analysis, indices, statistics), "
           "`evaluate_methods` one method after the other. Every run is a fresh process; 'cold' = a fresh "
           "cache folder (the domain vectors, trained once beforehand, are linked in), 'warm' = the folder "
           f"the cold run filled. {len(runs)} repetitions, interleaved.", ""]
    for var in variants:
        out.append(f"- **{var['title']}**: {len(var['methods'])} methods; {var['processes']}. "
                   f"Results identical in every run: {'yes' if fw['identical_results'][var['label']] else 'NO'}.")
    skipped = ", ".join(sorted(res["skipped"])) or "none"
    out += ["", f"Methods skipped (their vectors are not available here): {skipped}.",
            "", "| run | wall (median) | CPU s (median) | ratio (wall) | ratio (CPU) |", "|---|---|---|---|---|",
            f"| bare spaCy pass (floor) | {fmt_s(s['floor_wall'])} | {s['floor_cpu']:.1f} | 1 | 1 |"]
    for var in variants:
        v = s["variants"][var["label"]]
        out.append(f"| cold, {var['title']} | {fmt_s(v['cold_wall'])} | {v['cold_cpu']:.1f} | "
                   f"**{v['floor_ratio']:.2f}** (paired {v['floor_ratio_paired']:.2f}) | {v['floor_ratio_cpu']:.2f} |")
        out.append(f"| warm, {var['title']} | {fmt_s(v['warm_wall'])} | {v['warm_cpu']:.1f} | "
                   f"**{v['warm_ratio']:.3f}** of cold | {v['warm_ratio_cpu']:.3f} of cold |")
    out.append(f"| warm, {variants[0]['title']}, analysis cache only (prepared-corpus file removed) | "
               f"{fmt_s(s['warm_analysis_only_wall'])} | | {s['warm_analysis_only_ratio']:.3f} of cold | |")
    out += ["", "CPU seconds include the spaCy worker processes. 'paired' = median of the per-repetition ratios.", "",
            "Where the time goes (medians; open corpus + prepare + evaluate):", ""]
    for var in variants:
        v = s["variants"][var["label"]]
        out.append(f"- {var['title']}: cold {fmt_s(v['cold_wall_load'])} + {fmt_s(v['cold_wall_prepare'])} + "
                   f"{fmt_s(v['cold_wall_evaluate'])}; warm {fmt_s(v['warm_wall_load'])} + "
                   f"{fmt_s(v['warm_wall_prepare'])} + {fmt_s(v['warm_wall_evaluate'])}; peak memory: main process "
                   f"{v['peak_rss']:.0f} MB resident (VmHWM), main + workers {v['peak_pss_tree']:.0f} MB "
                   "(summed PSS, sampled every 0.25 s).")
    first = s["variants"][variants[0]["label"]]
    slow = sorted(first["per_method_cold"].items(), key=lambda kv: -kv[1])[:10]
    out += ["", f"Slowest methods ({variants[0]['title']}, cold run, evaluation of all terms; the first method "
            "that uses a vector kind also loads it from the vector cache): " + ", ".join(
                f"{k} {fmt_s(t)}" for k, t in slow) + ".", "", "Per repetition (wall s):", "",
            "| rep | load avg at start | floor | " + " | ".join(
                f"cold {v['label']} | warm {v['label']}" for v in variants) + " | warm, analysis only |",
            "|---|---|---|" + "---|---|" * len(variants) + "---|"]
    for i, r in enumerate(runs, 1):
        cells = " | ".join(f"{r['cold:' + v['label']]['wall']:.1f} | {r['warm:' + v['label']]['wall']:.2f}"
                           for v in variants)
        out.append(f"| {i} | {r['loadavg_start']} | {r['floor']['wall']:.1f} | {cells} | "
                   f"{r['warm_analysis_only']['wall']:.2f} |")
    return out + [""]


def bm25_section(b: dict) -> list[str]:
    med = b["median"]
    neg = b["candidate_collections_negative_idf"]
    excluded = {k: v for k, v in b["per_query"].items() if not v["formulas_agree"]}
    excl = "; ".join(f"`{k}` ({', '.join(v['negative_idf_tokens'])} in {v['max_df_over_N']:.0%} of the sentences)"
                     for k, v in excluded.items()) or "none"
    out = [
        "## 3. BM25: statinterp vs rank_bm25", "",
        f"Collection: every non-empty spaCy sentence of every distinct case text ({b['sentences']:,} sentences, "
        f"{b['tokens']:,} tokens, vocabulary {b['vocabulary']:,}), pre-tokenised once by statinterp (ids for "
        f"statinterp, the same tokens as strings for rank_bm25); queries: the {b['queries']} terms "
        f"({b['query_tokens']} tokens, none repeated within a query). Both with k1 = 1.2, b = 0.75 and this "
        "collection's statistics. statinterp = `collection_stats` (column-wise count matrix + N, df, cf) and "
        "`BM25().score_units`; rank_bm25 = `BM25Okapi(docs)` and `get_scores`.", "",
        "Where the formulas agree: IDF = log((N − df + 0.5)/(df + 0.5)) in both; statinterp's query-term "
        "saturation (k3 + 1)·qtf/(k3 + qtf) is 1 for tokens that occur once in the query; rank_bm25's average "
        "length counts empty documents, so empty sentences are left out. Where they differ: rank_bm25 replaces a "
        "negative IDF (a token in more than half of the documents) by ε × the mean IDF, statinterp keeps it. "
        f"Queries with such a token are timed but not compared: {excl}. The same difference makes per-term "
        "candidate collections useless for a comparison: every candidate contains the term, so "
        f"{neg['negative']} of {neg['query_tokens']} query tokens have df > N/2 there. Repeated query tokens "
        "would differ too (rank_bm25 adds each occurrence; statinterp saturates with k3).", "",
        "| | statinterp | rank_bm25 | speed-up |", "|---|---|---|---|",
        f"| index (count matrix + statistics / BM25Okapi()) | {fmt_s(med['statinterp_index'])} | "
        f"{fmt_s(med['rank_bm25_index'])} | {b['speedup_index']:.0f}× |",
        f"| score all sentences for {b['queries']} queries | {fmt_s(med['statinterp_query'])} | "
        f"{fmt_s(med['rank_bm25_query'])} | {b['speedup_query']:.0f}× |",
        f"| total | {fmt_s(med['statinterp_index'] + med['statinterp_query'])} | "
        f"{fmt_s(med['rank_bm25_index'] + med['rank_bm25_query'])} | **{b['speedup_total']:.0f}×** |",
    ]
    cpu = b.get("median_cpu")
    if cpu:  # CPU seconds move less with the machine's load than wall seconds
        ours = cpu["statinterp_index"] + cpu["statinterp_query"]
        theirs = cpu["rank_bm25_index"] + cpu["rank_bm25_query"]
        out.append(f"| total, CPU seconds | {ours:.2f} | {theirs:.2f} | **{theirs / ours:.0f}×** |")
    out += ["",
        f"Rankings (score descending, ties by sentence position) where the formulas agree: identical for "
        f"{b['identical_rankings']} of {b['compared']} queries; largest score difference {b['max_abs_diff']:.1e}. "
        f"Medians of {len(b['times']['statinterp_query'])} alternating runs in one process.", ""]
    return out


def growth_section(g: list[dict]) -> list[str]:
    out = ["## 4. Growth: synthetic corpora", "",
           "Sentences with lengths drawn from the real candidate sentences and tokens drawn from the real "
           "sentence-level unigram distribution; consecutive sentences form paragraphs and paragraphs form "
           "cases with the real mean sizes; the synthetic collection is its own background. Timed: scoring "
           "and ordering (`rank_order`) every sentence with TF-ISF, BM25 and QLLM, each plain, -p and -c "
           "(the first ranker on a level also builds its sparse count matrix). One fresh process per size.", "",
           "| sentences | tokens | paragraphs | cases | build statistics | rank (9 rankers) | per 1k sentences | "
           "peak RSS |", "|---|---|---|---|---|---|---|---|"]
    for r in g:
        out.append(f"| {r['sentences']:,} | {r['tokens']:,} | {r['paragraphs']:,} | {r['cases']:,} | "
                   f"{fmt_s(r['statistics_wall'])} | {fmt_s(r['rank_wall'])} | "
                   f"{r['rank_wall'] / r['sentences'] * 1000 * 1000:.1f} ms | {r['maxrss_mb']:.0f} MB |")
    if len(g) >= 2:
        a, b = g[0], g[-1]
        growth = (b["rank_wall"] / a["rank_wall"]) / (b["sentences"] / a["sentences"])
        out += ["", f"From {a['sentences']:,} to {b['sentences']:,} sentences the ranking time grows "
                f"{b['rank_wall'] / a['rank_wall']:.0f}× for {b['sentences'] / a['sentences']:.0f}× the sentences "
                f"(time per sentence × {growth:.2f})."]
    return out + [""]


def training_section(t: dict) -> list[str]:
    if "pending" in t:
        return ["## 5. Embedding training throughput", "", f"Pending: {t['pending']}", ""]
    out = ["## 5. Embedding training throughput", "",
           f"Corpus: the first {t['words']:,} words of the domain training corpus (the token sentences "
           f"`VectorProvider.sentences()` gives: every spaCy sentence of every case text), {t['epochs']} epoch(s); "
           f"skip-gram, 300 d, window 5, min_count 5, seed 1; fastText buckets {t['bucket']:,}, n-grams 3–6. "
           "statinterp = `statinterp.vectors.embeddings.train_vectors` with phrases off; "
           "gensim = `Word2Vec`/`FastText` "
           "+ `build_vocab` + `train` run directly. Each run a fresh process; medians of "
           f"{len(t['runs']) // 8} alternating runs.", "",
           "| model | workers | gensim words/s | statinterp words/s | statinterp overhead |", "|---|---|---|---|---|"]
    for r in t["table"]:
        out.append(f"| {r['kind']} | {r['workers']} | {r['gensim_wps']:,.0f} | {r['statinterp_wps']:,.0f} | "
                   f"{r['overhead'] * 100:+.1f}% |")
    return out + ["", "Two workers on two shared cores: the multi-worker figures depend on what else runs.", ""]


# --------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 repetition, 3 small terms, small sizes")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--only", default="floor,bm25,growth,train",
                        help="comma-separated subset of floor,bm25,growth,train")
    parser.add_argument("--workdir", default=None, help="keeps the trained domain vectors between invocations "
                        "(default: a folder under the system temp dir)")
    parser.add_argument("--no-vectors", action="store_true", help="do not train domain vectors for the methods")
    parser.add_argument("--out", default=None, help="Markdown report (default: benchmarks/RESULTS.md; "
                        "--quick prints only unless --out is given)")
    parser.add_argument("--render", default=None, metavar="RESULTS.json",
                        help="only rewrite the Markdown report from the figures of an earlier run")
    args = parser.parse_args(argv)
    if args.render:
        res = json.loads(Path(args.render).read_text(encoding="utf-8"))
        if "floor" in res:
            res["floor"]["summary"] = summarise_floor(res["floor"])  # this version's summary of the raw runs
        text = report(res)
        out = args.out or str(Path(args.render).with_suffix(".md"))
        Path(out).write_text(keep_sections(Path(out), text), encoding="utf-8")  # keeps ingest's and find's sections
        print(text)
        return 0
    only = set(args.only.split(","))
    repeats = args.repeats or (1 if args.quick else 3)
    terms = QUICK_TERMS if args.quick else None
    workdir = Path(args.workdir or Path(tempfile.gettempdir()) / "statinterp-bench")
    workdir.mkdir(parents=True, exist_ok=True)
    res: dict = {"machine": machine(), "loadavg_start": loadavg(), "data": shown_data(args.data),
                 "terms_label": f"{len(terms)} terms ({', '.join(terms)})" if terms else "the 14 terms",
                 "command": shown_command("python -m benchmarks.run", list(argv if argv is not None else sys.argv[1:]),
                                          {str(workdir): "WORK", str(args.data): "DATA"})}
    log(f"load average {res['loadavg_start']}; work folder {workdir}")
    if "floor" in only:
        prepared, ready = ensure_domain_vectors(args.data, terms, workdir, train=not args.no_vectors)
        methods, skipped = select_methods(prepared, ready)
        no_vectors, _ = select_methods(prepared, set())
        del prepared
        res["methods"], res["skipped"] = methods, skipped
        log(f"{len(methods)} methods run, {len(skipped)} skipped (no vectors); {len(no_vectors)} need no vectors")
        variants = [{"label": "all", "title": "all runnable methods", "methods": methods, "n_process": "auto",
                     "processes": "automatic worker processes (2 here)"}]
        if not args.quick:
            variants.append({"label": "all-1", "title": "all runnable methods, one process", "methods": methods,
                             "n_process": 1, "processes": "n_process=1"})
        if set(no_vectors) != set(methods):
            variants.append({"label": "novec", "title": "methods without word vectors", "methods": no_vectors,
                             "n_process": "auto", "processes": "automatic worker processes (2 here)"})
        fw = floor_and_warm(args.data, terms, workdir, variants, repeats)
        fw["summary"] = summarise_floor(fw)
        res["floor"] = fw
    if "bm25" in only:
        from benchmarks import bm25_peer
        from statinterp.text.analysis import Analyzer
        from statinterp.workflow import open_corpus

        log("BM25 vs rank_bm25 ...")
        corpus = open_corpus(args.data, terms=terms)
        res["bm25"] = bm25_peer.run(corpus, Analyzer(cache_dir=workdir / "vector-source"), repeats=3)
        log(f"  speed-up {res['bm25']['speedup_total']:.0f}x")
    if "growth" in only:
        sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
        res["growth"] = growth(args.data, terms, workdir, sizes)
    if "train" in only:
        max_words = 300_000 if args.quick else 2_000_000
        res["training"] = training(args.data, terms, workdir, max_words, epochs=1, repeats=1 if args.quick else 3)
    res["loadavg_end"] = loadavg()
    out = args.out or (None if args.quick else str(ROOT / "benchmarks" / "RESULTS.md"))
    earlier_json = Path(out).with_suffix(".json") if out else None
    if earlier_json is not None and earlier_json.exists() and only != {"floor", "bm25", "growth", "train"}:
        earlier = json.loads(earlier_json.read_text(encoding="utf-8"))  # keep the sections not run now
        for key in ("floor", "methods", "skipped", "bm25", "growth", "training"):
            if key in earlier and key not in res:
                res[key] = earlier[key]
        res["merged_from"] = earlier.get("machine", {}).get("date")
    text = report(res)
    print(text)
    if out:
        Path(out).write_text(keep_sections(Path(out), text), encoding="utf-8")  # keeps ingest's and find's sections
        Path(out).with_suffix(".json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
        log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
