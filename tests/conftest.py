"""Shared fixtures: an isolated analysis cache, a tiny hand-written corpus, its plain-Python
reference statistics and scores, and (once per session) the real annotated data prepared.

* ``STATINTERP_CACHE`` is set for the whole session to a fresh temporary folder, so tests never
  write into the user's ``~/.cache``. If ``STATINTERP_CACHE`` is already set, that folder is used
  (a deliberate override, e.g. to keep the real data's analysis between runs).
* :data:`TINY` is a corpus written by hand so that every statistic can be counted by hand: all
  its words are their own lemma and hold only letters, sentences end with ``.`` followed by a
  capitalised word, and paragraphs are lines.
* :class:`Reference` recomputes background statistics and TF-ISF / BM25 / QLLM with plain loops
  over Python lists and dicts, straight from the formulas (no NumPy, no statinterp code).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).parents[1]
#: Where CI (and the development checkout) keep the annotated data: ../shared/data (or the folder
#: named by STATINTERP_SHARED_DATA, e.g. for a git worktree that is not beside it).
SHARED_DATA = Path(os.environ.get("STATINTERP_SHARED_DATA") or REPO_ROOT.parent / "shared" / "data")
REAL_DATA = SHARED_DATA / "statutory_interpretation"


# --------------------------------------------------------------------------------------------
# Isolation of the analysis cache


@pytest.fixture(scope="session", autouse=True)
def analysis_cache_dir(tmp_path_factory) -> Path:
    """The session's analysis cache folder; ``STATINTERP_CACHE`` points to it during the tests."""
    override = os.environ.get("STATINTERP_CACHE")
    folder = Path(override) if override else tmp_path_factory.mktemp("statinterp-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATINTERP_CACHE", str(folder))
        # belt and braces: anything that falls back to the XDG cache lands in a temporary folder
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        # and the default label store (statinterp review) in another
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        yield folder


# --------------------------------------------------------------------------------------------
# Markers: ``slow`` and ``real_data`` (registered in pyproject.toml)

#: Fixtures that read the annotated data: a test using any of them is marked ``real_data``.
REAL_DATA_FIXTURES = {"shared_data", "real_corpus", "real_prepared", "real_prepared_candidates", "small_vectors",
                      "real"}


#: Tests measured at several seconds each (``pytest --durations``, 2 cores), as ``file::function``
#: (every parametrisation): marked ``slow`` here, in one place, so that ``-m "not slow"`` stays
#: under 2 minutes. tests/test_markers.py checks that each still names a test.
SLOW_TESTS = {
    "test_fuzz_inputs.py::test_truncated_json_is_one_clear_error",
    "test_fuzz_inputs.py::test_zip_header_that_lies_about_the_size_cannot_exhaust_memory",
    "test_fuzz_inputs.py::test_installed_console_script_reports_bad_input_in_one_line",
    "test_fuzz_inputs.py::test_provisions_file_without_the_term",
    "test_fuzz_inputs.py::test_analyser_accepts_texts_beyond_spacys_default_max_length",
    "test_embeddings.py::test_training_is_deterministic_across_processes_and_hash_seeds",
    "test_embeddings.py::test_load_fasttext_bin",
    "test_vector_methods.py::test_domain_vectors_are_cached_and_deterministic",
    "test_progress.py::test_the_library_never_imports_click",
    "test_learned.py::test_loo_never_trains_on_the_held_out_term",
    "test_learned.py::test_learners_rank",
    "test_learned.py::test_save_load_round_trip",
    "test_learned.py::test_explain",
    "test_learned.py::test_cli_train_rank_evaluate_explain",
    "test_learned.py::test_cli_cv_writes_report",
    "test_citations.py::test_cv_records_the_source_and_check_reruns_it",
    "test_learned_dense.py::test_dense_model_round_trip",
    "test_learned_dense.py::test_core_works_without_torch",
    "test_determinism.py::test_cli_outputs_are_byte_identical_cold_warm_partial_and_uncached",
    "test_determinism.py::test_constant_scores_rank_by_sentence_id",
    "test_determinism.py::test_rank_order_is_score_desc_then_id_asc_whatever_the_input_order",
    "test_determinism.py::test_vocabulary_ids_do_not_depend_on_what_the_cache_holds",
    "test_fast_paths.py::test_cold_warm_and_cached_prepare_agree",
    "test_fast_paths.py::test_a_session_keeps_the_worker_processes_for_every_call",
    "test_fast_paths.py::test_damaged_prepared_cache_is_discarded_with_a_warning_and_rebuilt",
    "test_fast_paths.py::test_multi_process_analysis_equals_single_process",
    "test_fast_paths.py::test_prepared_cache_yields_to_a_changed_analysis_entry",
    "test_evaluation.py::test_paired_test_keeps_zero_differences",
    "test_atomic_and_cache.py::test_interrupted_write_leaves_old_or_no_file_and_no_temp_files",
    "test_atomic_and_cache.py::test_concurrent_runs_sharing_a_fresh_cache_agree_and_leave_it_intact",
    "test_tuning_report.py::test_cli_reproduce_writes_files_matching_evaluate",
    "test_startup.py::test_every_exported_name_resolves_and_is_listed",
    "test_cli.py::test_jobs_default_leaves_the_process_count_to_the_analyser",
    "test_review_app.py::test_sigkill_after_a_label_loses_nothing",
    "test_review_app.py::test_review_a_term_found_in_a_collection",
    "test_review_app.py::test_host_needs_the_printed_token",
    "test_review_browser.py::test_label_rerank_export_in_chromium",
    "test_ingest.py::test_killed_ingest_leaves_a_consistent_collection_and_rerun_completes_it",
    "test_ingest.py::test_dask_engine_writes_the_same_collection_as_the_local_engine",
    "test_find.py::test_find_on_dask_gives_the_same_zip_as_local",
    "test_find.py::test_a_dask_worker_that_dies_mid_run_is_retried_and_find_is_unchanged",
    "test_ingest.py::test_a_reader_sees_whole_batches_while_an_ingest_writes",
    "test_ingest_robust.py::test_a_collection_on_a_read_only_mount_is_read",
    "test_ingest_robust.py::test_a_dask_task_failure_is_one_line",
    "test_ingest_robust.py::test_a_fifo_among_the_sources_is_refused_without_hanging",
    "test_ingest_robust.py::test_a_fifo_as_the_data_of_a_bag_folder_is_refused_without_hanging",
    "test_feedback.py::test_rank_uses_the_default_model",
    "test_feedback.py::test_feedback_ranker_with_the_default_model_prior",
}


def pytest_collection_modifyitems(config, items):
    """Mark tests that use the annotated data ``real_data``, and every ``real_data`` test ``slow``
    (preparing the 14 terms takes minutes cold), so ``-m "not slow"`` is the fast subset; mark
    the tests of :data:`SLOW_TESTS` ``slow``."""
    for item in items:
        if f"{item.path.name}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if REAL_DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.real_data)
        if item.get_closest_marker("real_data") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def dask_cluster():
    """A 2-worker ``distributed.LocalCluster`` (processes, one thread each)."""
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
    try:
        yield cluster
    finally:
        cluster.close()


# --------------------------------------------------------------------------------------------
# Real data


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of term zips of the real data set; the test is skipped if it is absent."""
    if not REAL_DATA.is_dir():
        pytest.skip(f"shared data not found at {REAL_DATA}")
    return REAL_DATA


def _jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@pytest.fixture(scope="session")
def real_corpus(shared_data):
    from statinterp.workflow import open_corpus

    return open_corpus(shared_data)


def _without_vectors(prepared):
    """Detach word vectors: training them on the real data takes minutes, so methods that need
    them fail with a UsageError saying so instead of training silently."""
    for ix in prepared:
        ix.vectors = None
    return prepared


@pytest.fixture(scope="session")
def real_prepared(real_corpus, analysis_cache_dir):
    """All 14 real terms prepared once per session (background statistics, no word vectors)."""
    from statinterp.workflow import prepare_corpus

    return _without_vectors(prepare_corpus(real_corpus, cache_dir=analysis_cache_dir, n_process=_jobs()))


@pytest.fixture(scope="session")
def small_vectors(real_prepared, analysis_cache_dir, tmp_path_factory):
    """A vector provider for the real data that is quick to build: domain word2vec and fastText
    with 16 dimensions, one epoch and no phrase model, trained on all the loaded case law, and
    the same word2vec vectors saved as pretrained w2vec (word2vec text), GloVe (no header) and
    fastt (.vec) files, loaded through --vectors' loader."""
    from statinterp.vectors.provider import VectorProvider, domain_settings

    texts = [c.text for ix in real_prepared for c in ix.term.cases.values()]
    settings = {
        "word2vec": domain_settings("word2vec", dim=16, epochs=1, phrases=False),
        "fasttext": domain_settings("fasttext", dim=16, epochs=1, phrases=False, bucket=20000),
    }
    trainer = VectorProvider(texts, analyzer=real_prepared.analyzer, cache_dir=analysis_cache_dir, settings=settings)
    kv = trainer.get("word2vec").kv
    folder = tmp_path_factory.mktemp("pretrained")
    kv.save_word2vec_format(str(folder / "w2v.txt"), binary=False)
    kv.save_word2vec_format(str(folder / "ft.vec"), binary=False)
    with open(folder / "glove.txt", "w", encoding="utf-8") as fh:
        for word in kv.index_to_key:
            fh.write(word + " " + " ".join(f"{x:.6f}" for x in kv[word]) + "\n")
    pretrained = {"w2vec": folder / "w2v.txt", "GloVe": folder / "glove.txt", "fastt": folder / "ft.vec"}
    return VectorProvider(texts, analyzer=real_prepared.analyzer, cache_dir=analysis_cache_dir, settings=settings,
                          pretrained=pretrained)


@pytest.fixture(scope="session")
def real_prepared_candidates(real_corpus, real_prepared, analysis_cache_dir):
    """The same terms with candidate-only statistics (reads the analyses from the cache)."""
    from statinterp.workflow import prepare_corpus

    return _without_vectors(prepare_corpus(real_corpus, cache_dir=analysis_cache_dir, statistics="candidates"))


# --------------------------------------------------------------------------------------------
# The tiny hand-written corpus

#: term key -> {"cases": {case id: (header line, {opinion id: [lines]})},
#:              "sentences": [(sentence id, opinion id, line index, text, label)]}
#: Case text = header + "\n" + the opinion texts joined by "\n"; opinion text = its lines joined
#: by "\n"; a paragraph is the line that holds a labelled sentence.
TINY = {
    "red_car": {
        "cases": {
            "c1": (
                "Header green city",
                {
                    "c1-o1": [
                        "The red car near the road.",  # A
                        "A dog in the park. The blue car in the city.",  # B C
                        "A red bird in a tree. The red car and the red car.",  # D E
                    ],
                    "c1-o2": [
                        "The old dog near the tree.",  # F
                        "A red car.",  # G
                    ],
                },
            ),
            "c2": (
                "Header small road",
                {
                    "c2-o1": [
                        "The small car in the park. A big tree.",  # H I
                        "The bird near the road. A dog near a tree.",  # J K
                        "The old tree in the city.",  # L
                    ],
                },
            ),
        },
        "sentences": [
            ("s1", "c1-o1", 0, "The red car near the road.", "high value"),  # A
            ("s2", "c1-o1", 1, "The blue car in the city.", "no value"),  # C
            ("s3", "c1-o1", 2, "The red car and the red car.", "certain value"),  # E
            ("s4", "c1-o2", 1, "A red car.", "potential value"),  # G
            ("s5", "c2-o1", 0, "The small car in the park.", None),  # H, unlabelled
        ],
    }
}

#: The spaCy sentences of each opinion of TINY, in order (for neighbours and hand counts).
TINY_OPINION_SENTENCES = {
    "c1-o1": ["The red car near the road.", "A dog in the park.", "The blue car in the city.",
              "A red bird in a tree.", "The red car and the red car."],
    "c1-o2": ["The old dog near the tree.", "A red car."],
    "c2-o1": ["The small car in the park.", "A big tree.", "The bird near the road.", "A dog near a tree.",
              "The old tree in the city."],
}


def build_records(spec: dict) -> dict[str, dict[str, dict]]:
    """``{term key: {kind: {id: record}}}`` in the data-set format, from a compact spec."""
    out: dict[str, dict[str, dict]] = {}
    for key, term in spec.items():
        cases, opinions, paragraphs, sentences = {}, {}, {}, {}
        lines_of, case_of = {}, {}
        for cid, (header, ops) in term["cases"].items():
            texts = []
            for pos, (oid, lines) in enumerate(ops.items(), start=1):
                text = "\n".join(lines)
                opinions[oid] = {"case_id": cid, "author": "JUDGE, J.", "type": "majority", "position": pos,
                                 "text": text}
                lines_of[oid], case_of[oid] = lines, cid
                texts.append(text)
            cases[cid] = {"original_id": 1, "name": f"Case {cid}", "short_name": f"Case {cid}",
                          "date": "2001-01-01", "official_citation": f"1 Tiny {cid}", "court": "Tiny Ct.",
                          "jurisdiction": "Tiny", "attorneys": [], "parties": [], "judges": [],
                          "text": "\n".join([header, *texts])}
        for sid, oid, line_no, text, label in term["sentences"]:
            line = lines_of[oid][line_no]
            assert text in line, (text, line)
            pid = f"{oid}-p{line_no}"
            paragraphs.setdefault(pid, {"case_id": case_of[oid], "opinion_id": oid, "position": line_no,
                                        "text": line})
            rec = {"case_id": case_of[oid], "opinion_id": oid, "paragraph_id": pid, "position": 0, "text": text}
            if label is not None:
                rec["label"] = label
            sentences[sid] = rec
        out[key] = {"case": cases, "opinion": opinions, "paragraph": paragraphs, "sentence": sentences}
    return out


def write_records(folder: Path, records: dict[str, dict[str, object]]) -> Path:
    """Write ``KEY-KIND.json`` files; a ``str`` value is written as it is (for malformed JSON)."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, kinds in records.items():
        for kind, data in kinds.items():
            text = data if isinstance(data, str) else json.dumps(data, indent=1)
            (folder / f"{key}-{kind}.json").write_text(text, encoding="utf-8")
    return folder


def zip_records(path: Path, key: str, kinds: dict[str, object]) -> Path:
    """One term zip holding ``KEY-KIND.json`` members."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for kind, data in kinds.items():
            zf.writestr(f"{key}-{kind}.json", data if isinstance(data, str) else json.dumps(data))
    return path


class CorpusBuilder:
    """Writes hand-made corpora into a test's ``tmp_path``."""

    def __init__(self, root: Path):
        self.root = root

    @staticmethod
    def records(spec: dict | None = None) -> dict[str, dict[str, dict]]:
        return build_records(copy.deepcopy(spec if spec is not None else TINY))

    def write(self, records: dict | None = None, name: str = "data") -> Path:
        return write_records(self.root / name, records if records is not None else self.records())

    @staticmethod
    def zip_term(path: Path, key: str, kinds: dict[str, object]) -> Path:
        return zip_records(path, key, kinds)

    def zip(self, records: dict | None = None, name: str = "zips") -> Path:
        """A folder with one zip per term; returns the folder."""
        records = records if records is not None else self.records()
        folder = self.root / name
        for key, kinds in records.items():
            zip_records(folder / f"{key}.zip", key, kinds)
        return folder


@pytest.fixture
def corpus_builder(tmp_path) -> CorpusBuilder:
    return CorpusBuilder(tmp_path)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    return write_records(tmp_path_factory.mktemp("tiny") / "data", build_records(TINY))


def _prepare_tiny(tiny_dir: Path, statistics: str):
    from statinterp.corpus.dataset import load_corpus
    from statinterp.index.term_index import prepare
    from statinterp.text.analysis import Analyzer

    return prepare(load_corpus(tiny_dir), Analyzer(cache_dir=False), statistics=statistics)


@pytest.fixture(scope="module")
def example(analysis_cache_dir):
    """The shipped example corpus (term ``vehicle``) prepared, without word vectors."""
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(), cache_dir=analysis_cache_dir)
    for ix in prepared:
        ix.vectors = None
    return prepared


@pytest.fixture(scope="session")
def tiny_prepared(tiny_dir):
    """TINY with background statistics (no cache)."""
    return _prepare_tiny(tiny_dir, "background")


@pytest.fixture(scope="session")
def tiny_prepared_candidates(tiny_dir):
    """TINY with candidate-only statistics."""
    return _prepare_tiny(tiny_dir, "candidates")


# --------------------------------------------------------------------------------------------
# Plain-Python reference


def ref_tokens(text: str) -> list[str]:
    """Tokens of TINY's texts: lower-cased runs of letters/digits (every word is its own lemma)."""
    return re.findall(r"[a-z0-9]+", text.lower())


def ref_sentences(line: str) -> list[str]:
    """Sentences of one line of TINY: split after '.' before a capital letter."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", line)


class RefStats:
    """N, df, cf, total tokens of a list of units (each a list of tokens); empty units not counted."""

    def __init__(self, units: list[list[str]]):
        units = [u for u in units if u]
        self.N = len(units)
        self.total = sum(len(u) for u in units)
        self.df: dict[str, int] = {}
        self.cf: dict[str, int] = {}
        for unit in units:
            for t in set(unit):
                self.df[t] = self.df.get(t, 0) + 1
            for t in unit:
                self.cf[t] = self.cf.get(t, 0) + 1

    @property
    def avg(self) -> float:
        return self.total / self.N


class Reference:
    """Background statistics and lexical scores of a spec, from the formulas, with plain loops."""

    K1 = 1.2
    K3 = 1.2
    B = 0.75
    QLLM_LAM = 0.9

    tokens = staticmethod(ref_tokens)
    sentences = staticmethod(ref_sentences)
    #: the spaCy sentences of each opinion of TINY, in order
    opinion_sentences = TINY_OPINION_SENTENCES

    def __init__(self, spec: dict):
        self.spec = spec
        self.records = build_records(spec)

    # ---- background statistics: every unit of every distinct case of every term
    def background(self) -> dict[str, RefStats]:
        units: dict[str, list[list[str]]] = {"sentence": [], "paragraph": [], "opinion": [], "case": []}
        seen = set()
        for key, term in self.spec.items():
            for cid, (_header, ops) in term["cases"].items():
                case_text = self.records[key]["case"][cid]["text"]
                if case_text in seen:
                    continue
                seen.add(case_text)
                units["case"].append(ref_tokens(case_text))
                for lines in ops.values():
                    units["opinion"].append(ref_tokens("\n".join(lines)))
                    for line in lines:
                        units["paragraph"].append(ref_tokens(line))
                        for sentence in ref_sentences(line):
                            units["sentence"].append(ref_tokens(sentence))
        return {lvl: RefStats(u) for lvl, u in units.items()}

    # ---- one term's candidates and their context units
    def candidate_texts(self, key: str, level: str) -> list[str]:
        rec = self.records[key]
        out = []
        for s in rec["sentence"].values():
            if level == "sentence":
                out.append(s["text"])
            elif level == "paragraph":
                out.append(rec["paragraph"][s["paragraph_id"]]["text"])
            elif level == "opinion":
                out.append(rec["opinion"][s["opinion_id"]]["text"])
            else:
                out.append(rec["case"][s["case_id"]]["text"])
        return out

    def candidates(self, key: str) -> dict[str, RefStats]:
        """One term's candidate-only statistics: its candidate sentences, their distinct
        paragraphs and opinions, and all its cases."""
        out = {}
        for level in ("sentence", "paragraph", "opinion", "case"):
            units = []
            if level == "sentence":
                units += [ref_tokens(t) for t in self.candidate_texts(key, level)]
            elif level == "case":
                units += [ref_tokens(c["text"]) for c in self.records[key]["case"].values()]
            else:
                ids = {s[f"{level}_id"] for s in self.records[key]["sentence"].values()}
                units += [ref_tokens(self.records[key][level][i]["text"]) for i in sorted(ids)]
            out[level] = RefStats(units)
        return out

    def neighbours(self, key: str, d: int) -> list[list[str] | None]:
        """Tokens of the sentence ``d`` places from each candidate in its opinion (None if none)."""
        out = []
        for s in self.records[key]["sentence"].values():
            seq = TINY_OPINION_SENTENCES[s["opinion_id"]]
            j = seq.index(s["text"]) + d
            out.append(ref_tokens(seq[j]) if 0 <= j < len(seq) else None)
        return out

    # ---- the scores, straight from the formulas
    @staticmethod
    def tfisf(query: list[str], unit: list[str], st: RefStats) -> float:
        """Σ_t log(tf+1) · log((N+1)/(0.5+df)) · log(qtf+1)."""
        score = 0.0
        for t, qtf in Counter(query).items():
            tf = unit.count(t)
            df = st.df.get(t, 0)
            score += math.log(tf + 1) * math.log((st.N + 1) / (0.5 + df)) * math.log(qtf + 1)
        return score

    @classmethod
    def bm25(cls, query: list[str], unit: list[str], st: RefStats, k1: float | None = None,
             b: float | None = None, k3: float | None = None) -> float:
        """Σ_t (k1+1)tf/(k1(1−b+b·L/avg)+tf) · log((N−df+0.5)/(df+0.5)) · (k3+1)qtf/(k3+qtf)."""
        k1 = cls.K1 if k1 is None else k1
        b = cls.B if b is None else b
        k3 = cls.K3 if k3 is None else k3
        score = 0.0
        for t, qtf in Counter(query).items():
            tf = unit.count(t)
            df = st.df.get(t, 0)
            tf_part = (k1 + 1) * tf / (k1 * (1 - b + b * len(unit) / st.avg) + tf)
            idf = math.log((st.N - df + 0.5) / (df + 0.5))
            qtf_part = (k3 + 1) * qtf / (k3 + qtf)
            score += tf_part * idf * qtf_part
        return score

    @classmethod
    def qllm(cls, query: list[str], unit: list[str], st: RefStats, context: list[str] | None = None,
             lam1: float = 0.0, lam: float | None = None) -> float:
        """Σ_t qtf · log((1−λ) cf/|C| + (λ−λ1) tf_s/L_s + λ1 tf_c/L_c); tokens with cf = 0 left out."""
        lam = cls.QLLM_LAM if lam is None else lam
        score = 0.0
        for t, qtf in Counter(query).items():
            cf = st.cf.get(t, 0)
            if cf == 0:
                continue
            p_s = unit.count(t) / len(unit) if unit else 0.0
            p_c = (context.count(t) / len(context) if context else 0.0) if context is not None else 0.0
            score += qtf * math.log((1 - lam) * cf / st.total + (lam - lam1) * p_s + lam1 * p_c)
        return score


@pytest.fixture(scope="session")
def reference() -> Reference:
    return Reference(TINY)


# --------------------------------------------------------------------------------------------
# `statinterp review` in a subprocess (tests/test_review_app.py, tests/test_review_browser.py)


@pytest.fixture
def review_server():
    """Start ``statinterp review ARGS --no-browser --port 0`` in a subprocess; returns
    ``start(*args) -> (process, url)``. Every server started is stopped (SIGTERM, then SIGKILL)."""
    import subprocess
    import sys
    import time

    started = []

    def start(*args: str):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "statinterp.app.cli", "review", *args, "--no-browser",
                                 "--port", "0", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)
        started.append(proc)
        deadline = time.monotonic() + 180
        lines = []
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"Open (http://\S+)", line)
            if m:
                return proc, m.group(1)
        pytest.fail("the review server did not start: " + "".join(lines))

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stderr.close()


@pytest.fixture(scope="session")
def example_with_copy(tmp_path_factory) -> Path:
    """A copy of the example data in which one sentence ("Our traffic code, moreover, ...") appears
    twice, under a second id ``copy-of-traffic-code``: a near-duplicate pair for the review tests."""
    import shutil

    from statinterp.workflow import example_data_path

    folder = tmp_path_factory.mktemp("example-with-copy") / "data"
    shutil.copytree(example_data_path(), folder)
    path = folder / "vehicle-sentence.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    original = next(r for r in records.values() if r["text"].startswith("Our traffic code, moreover"))
    records["copy-of-traffic-code"] = dict(original, position=99)
    records["copy-of-traffic-code"].pop("label", None)
    path.write_text(json.dumps(records), encoding="utf-8")
    return folder


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process; its exit code, stdout and stderr."""
    from statinterp.app.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single `statinterp: error:` line of ``err`` (fails on a traceback or more lines)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("statinterp: error: "), err
    return lines[0]


def example_as_two_terms(folder: Path) -> Path:
    """The shipped example term written twice into ``folder`` (``vehicle`` and ``motor_vehicle``):
    the smallest data on which leave-one-term-out has a fold."""
    import shutil

    from statinterp.workflow import example_data_path

    folder.mkdir(parents=True, exist_ok=True)
    for kind in ("case", "opinion", "paragraph", "sentence"):
        src = example_data_path() / f"vehicle-{kind}.json"
        shutil.copy(src, folder / f"vehicle-{kind}.json")
        shutil.copy(src, folder / f"motor_vehicle-{kind}.json")
    return folder
