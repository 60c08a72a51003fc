"""Rankings and evaluation results as pandas DataFrames (statinterp/evaluation/ranking.py,
Ranking.to_frame): PyTerrier's columns, the same figures, a clear error without the extra."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from statinterp.errors import UsageError
from statinterp.evaluation.ranking import RANKING_COLUMNS, rank, results_frame
from statinterp.rankers.grammar import build_method
from statinterp.workflow import evaluate_methods

pandas_reason = "pandas is the optional extra statinterp[pandas] (in the test extra); not installed here"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    from statinterp.workflow import open_corpus, prepare_corpus

    return prepare_corpus(open_corpus(), cache_dir=tmp_path_factory.mktemp("cache"))


def test_without_pandas_the_error_names_the_extra(example, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    ranking = rank(build_method("TF-ISF-p"), example["vehicle"])
    for call in (lambda: ranking.to_frame(), lambda: results_frame([])):
        with pytest.raises(UsageError) as exc:
            call()
        assert "statinterp[pandas]" in str(exc.value) and "\n" not in str(exc.value)


def test_ranking_frame_has_pyterrier_columns_and_the_rows(example):
    pytest.importorskip("pandas", reason=pandas_reason)
    ranking = rank(build_method("TF-ISF-p"), example["vehicle"])
    frame = ranking.to_frame()
    assert list(frame.columns) == list(RANKING_COLUMNS)
    assert list(frame.columns[:6]) == ["qid", "query", "docno", "text", "score", "rank"]
    rows = ranking.rows()
    assert len(frame) == len(rows) == len(ranking)
    assert list(frame["docno"]) == [r.sentence_id for r in rows]
    assert list(frame["rank"]) == list(range(len(rows)))  # 0-based, as in PyTerrier
    assert np.array_equal(frame["score"].to_numpy(), [r.score for r in rows])
    assert set(frame["qid"]) == {"vehicle"} and set(frame["query"]) == {example["vehicle"].term.query}
    assert [None if lab is None else lab for lab in frame["label"]] == [r.label for r in rows]
    assert list(ranking.to_frame(3)["docno"]) == [r.sentence_id for r in rows[:3]]


def test_ranking_frame_drops_into_ir_measures(example):
    """The frame, renamed to ir_measures' column names and scored by its rank (tied scores: trec_eval's
    tools break ties by docno descending, statinterp by sentence id ascending), gives statinterp's NDCG."""
    pd = pytest.importorskip("pandas", reason=pandas_reason)
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is in the test extra; not installed here")
    ix = example["vehicle"]
    ranking = rank(build_method("TF-ISF-p"), ix)
    assert len(np.unique(ranking.scores)) < len(ranking)  # ties, so the rank column matters
    frame = ranking.to_frame()
    run = pd.DataFrame({"query_id": frame["qid"], "doc_id": frame["docno"], "score": -frame["rank"].astype(float)})
    qrels = pd.DataFrame([(ix.key, s.id, int(s.gain)) for s in ix.sentences if s.gain is not None],
                         columns=["query_id", "doc_id", "relevance"])
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.nDCG @ 100], qrels, run)
    ours = ranking.evaluate()
    assert theirs[ir_measures.nDCG @ 10] == pytest.approx(ours["nDCG@10"], abs=1e-12)
    assert theirs[ir_measures.nDCG @ 100] == pytest.approx(ours["nDCG@100"], abs=1e-12)


def test_results_frame_is_pt_experiment_shaped(example):
    pytest.importorskip("pandas", reason=pandas_reason)
    results = evaluate_methods(example, ["Random", "TF-ISF-p"], ["nDCG@10", "nDCG@100"])
    wide = results_frame(results)
    measures = list(results[0].macro)
    assert {"nDCG@10", "nDCG@100"} <= set(measures)
    assert list(wide.columns) == ["name", *measures]
    assert list(wide["name"]) == ["Random", "TF-ISF-p"]
    for row, result in zip(wide.to_dict("records"), results, strict=True):
        assert {m: row[m] for m in measures} == result.macro
    long = results_frame(results, perquery=True)
    assert list(long.columns) == ["name", "qid", "measure", "value"]
    assert len(long) == len(results) * len(results[0].per_term) * len(measures)
    got = long.set_index(["name", "qid", "measure"])["value"]
    assert got[("TF-ISF-p", "vehicle", "nDCG@10")] == results[1].per_term["vehicle"]["nDCG@10"]
