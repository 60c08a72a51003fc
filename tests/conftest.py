"""Fixtures shared by every test (and nothing else: paths, the tiny corpus, the plain-Python
reference scorers and CLI helpers are modules of :mod:`tests.support`).

* ``STATINTERP_CACHE`` is set for the whole session to a fresh temporary folder, so tests never
  write into the user's ``~/.cache``. If ``STATINTERP_CACHE`` is already set, that folder is used
  (a deliberate override, e.g. to keep the real data's analysis between runs).
* The tiny hand-written corpus (:data:`tests.support.corpora.TINY`) written, prepared and
  recomputed by :class:`tests.support.reference_scorers.Reference`.
* The real annotated data prepared once per session: a test that uses one of these fixtures
  (:data:`REAL_DATA_FIXTURES`) is marked ``real_data`` here; it must carry
  ``@pytest.mark.slow`` itself (tests/suite/test_markers.py checks it).
* ``statinterp review`` in a subprocess, and a copy of the example data with a near-duplicate.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.support")

#: the fast loop's budget report (tests/support/budget.py)
pytest_plugins = ["tests.support.budget"]

from tests.support.corpora import TINY, CorpusBuilder, build_records, write_records  # noqa: E402
from tests.support.paths import REAL_DATA  # noqa: E402
from tests.support.reference_scorers import Reference  # noqa: E402

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


def pytest_collection_modifyitems(config, items):
    """Mark the tests that use the annotated data (:data:`REAL_DATA_FIXTURES`) ``real_data``.
    ``slow`` is never added here: it is written on each slow test (``@pytest.mark.slow``), every
    ``real_data`` test included, and tests/suite/test_markers.py fails on a ``real_data`` test
    without it."""
    for item in items:
        if REAL_DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.real_data)


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
# The tiny hand-written corpus (tests.support.corpora.TINY)


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
# Plain-Python reference (tests.support.reference_scorers)


@pytest.fixture(scope="session")
def reference() -> Reference:
    return Reference(TINY)


# --------------------------------------------------------------------------------------------
# `statinterp review` in a subprocess (tests/app/test_review.py,
# tests/end_to_end/test_review_browser.py)


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
