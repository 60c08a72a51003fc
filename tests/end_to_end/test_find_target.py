"""The find target on the 14 shared terms: their cases written as CAP per-case files, ingested,
found, and compared with the labelled sentences (issue 17). Slow: ingesting the 985 distinct
cases with their statistics takes minutes; reports/find.md has the figures of a full run
(``python -m experiments.find_target``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from statinterp.collection.ingest import ingest
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.plaintext import read_dataset
from statinterp.sources.records import CaseRecord
from statinterp.workflow import find_and_compare

pytestmark = [pytest.mark.slow, pytest.mark.real_data]

#: Measured 2026-11-25 (reports/find.md): 92.4 % (1,842 of 1,993) with the layout rules of the line-joining
#: segmentation, chosen on these terms (in-sample); the issue's target is 92 % (reports/find_segmentation.md: at
#: best about 94.5 % by layout).
EXACT_TARGET = 0.92
#: Held apart (reports/find_segmentation.md, 7 folds): 92.1 % exact (1,835 of 1,993), 99.7 % found, each term
#: measured with the line-joining rules chosen on the other folds' terms.
HELD_APART_EXACT = 0.92
HELD_APART_FOUND = 0.99


@pytest.fixture(scope="module")
def target(shared_data, tmp_path_factory, analysis_cache_dir):
    from statinterp.workflow import evaluate_methods, open_corpus, prepare_corpus, prepare_found

    root = tmp_path_factory.mktemp("find-target")
    records: dict[str, CaseRecord] = {}
    for path in sorted(Path(shared_data).glob("*.zip")):
        for record in read_dataset(path):
            if isinstance(record, CaseRecord):
                records.setdefault(record.source_id, record)
    volume = write_cap_volume(list(records.values()), root / "cap")
    assert len(list((volume / "cases").glob("*.json"))) == len(records)
    ingest([volume], root / "collection")
    labelled = open_corpus(shared_data)
    results, found, _ = find_and_compare(root / "collection", labelled)
    on_found = evaluate_methods(prepare_found(root / "collection", found, cache_dir=analysis_cache_dir),
                                ["TF-ISF-p"], ["nDCG@10"])[0]
    on_annotated = evaluate_methods(prepare_corpus(labelled, cache_dir=analysis_cache_dir),
                                    ["TF-ISF-p"], ["nDCG@10"])[0]
    return results, found, on_found, on_annotated


def test_at_least_99_percent_of_labelled_sentences_are_found(target):
    results = target[0]
    assert len(results) == 14
    labelled = sum(r.labelled for r in results)
    contained = sum(r.found_contained for r in results)
    assert contained / labelled >= 0.99, [r.summary() for r in results]


def test_labels_are_carried_over_by_containment(target):
    results, found = target[0], target[1]
    for r in results:
        term = found.terms[r.term]
        carried = [s for s in term.sentences if s.label is not None]
        assert len(carried) == r.labels_carried >= r.found_exact
        assert r.labels_carried + r.extra == r.candidates == len(term.sentences)


def test_92_percent_found_as_exactly_the_same_sentence(target):
    results = target[0]
    exact = sum(r.found_exact for r in results) / sum(r.labelled for r in results)
    assert exact >= EXACT_TARGET, [r.summary() for r in results]


def test_tfisf_p_on_found_candidates_is_within_0_01_of_the_annotated(target):
    on_found, on_annotated = target[2], target[3]
    assert abs(on_found.macro["nDCG@10"] - on_annotated.macro["nDCG@10"]) <= 0.01


def test_rules_chosen_without_a_term_meet_the_targets_on_it(shared_data):
    """The held-apart figure (experiments.find_segmentation's rule choice, no ingest): every term is found
    with the line-joining rules chosen on the other folds' terms; the default rules are the ones the
    same procedure picks on all 14 terms."""
    from experiments.find_segmentation import MemoryCollection, load_records, rule_choice
    from statinterp.text.segmentation import DEFAULT_JOIN_RULES
    from statinterp.workflow import open_corpus

    memory = MemoryCollection(load_records(Path(shared_data)))
    choice = rule_choice(memory, open_corpus(shared_data), 7)
    n = choice["labelled"]
    exact, found = choice["held_apart"]
    assert n == 1993 and len(choice["held_apart_folds"]) == 7
    assert found / n >= HELD_APART_FOUND and exact / n >= HELD_APART_EXACT, choice["held_apart_folds"]
    assert set(choice["chosen"]) == DEFAULT_JOIN_RULES
