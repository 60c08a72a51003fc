"""Labels (statinterp.corpus.dataset) in any case and spacing, other labels refused, and corpora
with no or some labelled sentences: ranked, evaluated on what is labelled (issue 5)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from statinterp.corpus.dataset import LABEL_GAINS, load_corpus
from tests.support.bad_input import FUZZ, RECORDS, cli_error, write_term
from tests.support.cli import assert_one_line_error, capture_main

LABEL_VARIANTS = st.tuples(
    st.sampled_from(sorted(LABEL_GAINS)),
    st.lists(st.booleans(), min_size=15, max_size=15),
    st.text(alphabet=" \t\n\r\u00a0\u2003", max_size=3),
    st.text(alphabet=" \t\n\r\u00a0\u2003", max_size=3),
)


@FUZZ
@given(variant=LABEL_VARIANTS)
def test_labels_any_case_with_surrounding_whitespace_are_accepted(variant):
    label, upper, left, right = variant
    raw = left + "".join(c.upper() if u else c for c, u in zip(label, upper, strict=False)) + right
    records = json.loads(json.dumps(RECORDS))
    rid = next(iter(records["sentence"]))
    records["sentence"][rid]["label"] = raw
    with tempfile.TemporaryDirectory() as tmp:
        term = load_corpus(write_term(Path(tmp), records)).term("vehicle")
    sentence = next(s for s in term.sentences if s.id == rid)
    assert sentence.label == label
    assert sentence.gain == LABEL_GAINS[label]


@FUZZ
@given(raw=st.text(max_size=20))
def test_any_other_label_is_an_error_naming_it(raw):
    assume(" ".join(raw.split()).lower() not in LABEL_GAINS)
    records = json.loads(json.dumps(RECORDS))
    rid = next(iter(records["sentence"]))
    records["sentence"][rid]["label"] = raw
    with tempfile.TemporaryDirectory() as tmp:
        line = cli_error(write_term(Path(tmp), records), "vehicle-sentence.json", f"record {rid!r}",
                         "field 'label'", "unknown label")
    assert f"unknown label {raw!r}" in line


def test_unlabelled_corpus_ranks_but_does_not_evaluate(tmp_path):
    records = json.loads(json.dumps(RECORDS))
    for rec in records["sentence"].values():
        rec.pop("label")
    folder = write_term(tmp_path / "unlabelled", records)
    code, out, err = capture_main(["evaluate", "-q", "--no-cache", "--data", str(folder), "-m", "BM25"])
    assert_one_line_error(code, err, "no loaded term has labelled sentences", "rank works")
    assert out == ""

    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--data", str(folder), "--format", "json",
                               "--top", "0"])
    assert code == 0, err
    ranked = json.loads(out)
    assert ranked["candidates"] == len(records["sentence"])
    assert all(r["label"] is None for r in ranked["results"])


def test_partly_labelled_corpus_evaluates_labelled_sentences_and_says_so(tmp_path):
    records = json.loads(json.dumps(RECORDS))
    dropped = sorted(records["sentence"])[:5]
    for rid in dropped:
        records["sentence"][rid].pop("label")
    folder = write_term(tmp_path / "partly", records)
    code, out, err = capture_main(["evaluate", "-q", "--no-cache", "--data", str(folder), "-m", "TF-ISF",
                               "--format", "json"])
    assert code == 0, err
    assert "5 unlabelled sentence(s) left out of the evaluation" in err
    result = json.loads(out)
    assert result[0]["method"] == "TF-ISF" and 0.0 <= result[0]["macro"]["nDCG@10"] <= 1.0
