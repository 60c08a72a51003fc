"""Rankers, gates and similarities are values: parameters only, immutable, equal by parameters,
composed one way, with one canonical name that the grammar parses back."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statinterp
from statinterp.errors import UsageError
from statinterp.rankers.base import Component, Expanded, Gate, Gated, Interpolated, Ranker, Recursive, Requirements
from statinterp.rankers.embedding import Cosine
from statinterp.rankers.gates import DomainGate, NoveltyGate
from statinterp.rankers.grammar import build_method, list_methods, parse, with_params
from statinterp.rankers.lexical import BM25, QLLM, TFISF, RandomOrder
from statinterp.rankers.novelty import NewWordRatio, NewWords, WMDNovelty
from statinterp.vectors.provider import vector_kinds

ALL_NAMES = [name for name, _ in list_methods()]


@pytest.fixture()
def ix(example):
    return example["vehicle"]


def tp_tg_nr_fluent():
    return TFISF().in_context("paragraph", 0.9).gated(DomainGate(TFISF(), "provision", 0.5), NoveltyGate("NWR", 0.2))


# ----------------------------------------------------------------------------- one name, one value


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_listed_name_is_canonical_and_round_trips(name):
    ranker = parse(name)
    assert str(ranker) == ranker.name == name  # the listed names are the canonical ones
    assert parse(str(ranker)) == ranker
    assert hash(parse(str(ranker))) == hash(ranker)


@pytest.mark.parametrize("alias, canonical", [
    ("TF-ISF-p+Tg+Nr", "Tp-Tg-Nr"),
    ("TF-ISF-p+TF-ISF-g>=0.5+NWR>=0.2", "Tp-Tg-Nr"),
    ("Tp+Tg+NWR", "Tp-Tg-Nr"),
    ("Tp-Tg+Nr", "Tp-Tg-Nr"),
    ("BM25-p+gate(TF-ISF-g,0.5)", "Bp-Tg"),
    ("w2vec*-r+Nr", "Wr-Nr"),
    ("Tp", "TF-ISF-p"),
    ("Qc", "QLLM-c"),
    ("QLLM-p+gate(BM25-g,0.4)", "QLLM-p+BM25-g>=0.4"),
    ("QLLM-p+BM25-g", "QLLM-p+BM25-g>=0.5"),
    ("TF-ISF+NW", "TF-ISF+NW>=3"),
    ("BM25-r + Tg + NWR >= 0.30", "BM25-r+Tg+NWR>=0.3"),
])
def test_aliases_parse_to_the_canonical_value(alias, canonical):
    assert parse(alias) == parse(canonical)
    assert str(parse(alias)) == canonical
    assert len({parse(alias), parse(canonical)}) == 1


def test_different_rankers_are_different_values():
    names = ["Tp-Tg-Nr", "Tp-Nr-Tg", "Tp-Tg", "Bp-Tg-Nr", "TF-ISF-p", "TF-ISF-o", "BM25-r+Tg+NWR>=0.3",
             "BM25-r+Tg+NWR>=0.4", "TF-ISF-g", "TF-ISF-e", "NW", "NWR"]
    assert len({parse(n) for n in names}) == len(names)
    assert parse("TF-ISF-p") != parse("TF-ISF-p").set_params(lam=0.5)


def test_the_fluent_chain_is_the_paper_compound():
    ranker = tp_tg_nr_fluent()
    assert ranker == parse("Tp-Tg-Nr") == build_method("Tp-Tg-Nr")
    assert str(ranker) == "Tp-Tg-Nr"
    assert ranker == Gated(Interpolated(TFISF(), "paragraph", 0.9),
                           [DomainGate(TFISF(), "provision", 0.5), NoveltyGate("NWR", 0.2)])
    # gating a gated ranker adds gates to the same compound (as BASE+GATE+GATE does)
    assert TFISF().in_context().gated(DomainGate()).gated(NoveltyGate()) == ranker
    assert TFISF().recursive() == parse("TF-ISF-r")
    assert BM25().expanded("similar") == parse("BM25-e")
    assert QLLM().in_context("case") == parse("QLLM-c")


def test_defaults_resolved_later_compare_equal():
    # λ1 and the novelty threshold left at None mean the paper's defaults
    assert Interpolated(QLLM(), "case") == Interpolated(QLLM(), "case", 0.6)
    assert Interpolated(QLLM(), "case").lam is None and Interpolated(QLLM(), "case").weight == 0.6
    assert NoveltyGate("NW") == NoveltyGate("NW", 3.0)
    assert str(NoveltyGate("NW")) == "NW>=3"


# ----------------------------------------------------------------------------- parameters only


def _components():
    out = {}
    for name in ALL_NAMES:
        for component in parse(name).walk():
            out[repr(component)] = component
    out.update((repr(c), c) for c in (WMDNovelty("GloVe", norm=True), DomainGate(BM25(1.0, 0.5, 2.0), "similar", 0.3,
                                                                                  n_similar=20, top=0.2)))
    return list(out.values())


@pytest.mark.parametrize("component", _components(), ids=repr)
def test_constructor_stores_only_its_parameters(component):
    params = component.get_params()
    assert list(params) == list(type(component).param_names())
    rebuilt = type(component)(**params)
    assert rebuilt == component and repr(rebuilt) == repr(component)
    # nothing but the parameters is stored (no derived state built in the constructor)
    assert set(vars(component)) == set(params)
    # a frozen dataclass whose fields are exactly the parameters
    assert dataclasses.is_dataclass(component) and type(component).__dataclass_params__.frozen
    assert [f.name for f in dataclasses.fields(component)] == list(params)


@pytest.mark.parametrize("component", _components(), ids=repr)
def test_components_are_immutable(component):
    name = next(iter(component.get_params()), "anything")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(component, name, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        component.extra = 1


def test_values_survive_pickle_and_copy():
    import copy
    import pickle

    ranker = parse("Wr-Tg-Nr")
    for again in (pickle.loads(pickle.dumps(ranker)), copy.deepcopy(ranker), copy.copy(ranker)):
        assert again == ranker and str(again) == "Wr-Tg-Nr"
        with pytest.raises(dataclasses.FrozenInstanceError):
            again.base = None


def test_gated_needs_a_gate():
    with pytest.raises(ValueError, match="at least one gate"):
        TFISF().gated()
    with pytest.raises(TypeError, match="Gate objects"):
        TFISF().gated(TFISF())


def test_set_params_returns_a_changed_copy():
    gate = DomainGate(TFISF(), "provision", 0.5)
    changed = gate.set_params(lam=0.3)
    assert gate.lam == 0.5 and changed.lam == 0.3 and changed is not gate
    assert str(changed) == "TF-ISF-g>=0.3"
    ranker = parse("Bp-Tg")
    deeper = ranker.set_params(base__similarity__k1=2.0)
    assert deeper.base.similarity == BM25(k1=2.0) and ranker.base.similarity == BM25()
    assert deeper.get_params(deep=True)["base__similarity__k1"] == 2.0
    with pytest.raises(TypeError, match="no parameter 'k9'"):
        BM25().set_params(k9=1)


def test_domain_gate_derives_its_expansion_on_use(ix):
    """A changed similarity changes the gate's case scores: nothing derived goes stale."""
    gate = DomainGate(TFISF(), "provision", 0.5).set_params(similarity=BM25())
    assert str(gate) == "BM25-g>=0.5"
    assert np.array_equal(gate.case_scores(ix), DomainGate(BM25(), "provision", 0.5).case_scores(ix))
    assert not np.array_equal(gate.case_scores(ix), DomainGate(TFISF()).case_scores(ix))


def test_parts_list_the_composition():
    ranker = tp_tg_nr_fluent()
    assert ranker.parts() == (ranker.base, *ranker.gates)
    assert ranker.base.parts() == (TFISF(),)
    assert [type(c).__name__ for c in ranker.walk()] == ["Gated", "Interpolated", "TFISF", "DomainGate", "TFISF",
                                                         "NoveltyGate"]


# ----------------------------------------------------------------------------- declared needs


@pytest.mark.parametrize("name, vectors, provision, neighbours", [
    ("TF-ISF-p", (), False, False),
    ("TF-ISF-r", (), False, True),
    ("TF-ISF-g", (), True, False),
    ("TF-ISF-e", ("word2vec",), False, False),
    ("NWR", (), True, False),
    ("WMD", ("word2vec",), True, False),
    ("w2vec*-p", ("word2vec",), False, False),
    ("fastt*-r", ("fasttext",), False, True),
    ("Wr-Tg-Nr", ("word2vec",), True, True),
    ("Tp+TF-ISF-e>=0.3", ("word2vec",), False, False),
    ("Tp+WMD>=1", ("word2vec",), True, False),
    ("fastt*+w2vec*-g>=0.4", ("fasttext", "word2vec"), True, False),
])
def test_requirements_are_declared_by_the_parts(name, vectors, provision, neighbours):
    ranker = parse(name)
    assert ranker.requires() == Requirements(vectors, provision, neighbours)
    assert vector_kinds(ranker) == list(vectors)


def test_pretrained_and_wmd_gate_vectors_are_declared():
    ranker = TFISF().gated(NoveltyGate("WMD", 1.0, vectors="GloVe"), DomainGate(BM25(), "similar", vectors="fastt"))
    assert ranker.requires().vectors == ("GloVe", "fastt")
    assert Cosine("w2vec").requires().vectors == ("w2vec",)
    assert vector_kinds(object()) == []


# ----------------------------------------------------------------------------- one interface


def _ranker_classes():
    seen, todo = [], [Ranker]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    import statinterp.learned.model  # noqa: F401 - the learned ranker shares the interface

    return seen


def test_one_score_and_explain_signature():
    import statinterp.learned.model  # noqa: F401

    for cls in _ranker_classes() + [Gate, NoveltyGate, DomainGate]:
        explain = inspect.signature(cls.explain)
        assert list(explain.parameters) == ["self", "index", "i"], cls
        if hasattr(cls, "score"):
            assert list(inspect.signature(cls.score).parameters) == ["self", "index"], cls


def test_explain_of_every_method_names_it(ix):
    for name in ["Random", "TF-ISF", "BM25-p", "QLLM-r", "TF-ISF-g", "NW", "NWR", "Qc-Tg-Nr", "BM25-r+Tg+NWR>=0.3"]:
        ranker = parse(name)
        e = ranker.explain(ix, 0)
        assert e["method"] == name and e["score"] == pytest.approx(float(ranker.score(ix)[0]))


# ----------------------------------------------------------------------------- keyword parameters


def test_with_params_is_build_method_on_objects(ix):
    ranker = with_params(parse("Tp-Tg-Nr"), lam=0.7, lam2=0.3, nwr=0.5)
    assert ranker == build_method("Tp-Tg-Nr", lam=0.7, lam2=0.3, nwr=0.5)
    assert ranker == TFISF().in_context("paragraph", 0.7).gated(DomainGate(lam=0.3), NoveltyGate("NWR", 0.5))
    assert str(ranker) == "TF-ISF-p+TF-ISF-g>=0.3+NWR>=0.5"  # the name says what the gates now are
    assert with_params(parse("QLLM-g"), qllm_lam=0.5) == Expanded(QLLM(0.5))
    # a gate parameter also reaches the gates of a gated base (Tp-Tg+NW>=5 is one compound)
    assert build_method("Tp-Tg+NW>=5", lam2=0.2).gates[0].lam == 0.2
    with pytest.raises(UsageError, match="'Tp-Nr' has no part that parameter.s. lam2 apply"):
        with_params(parse("Tp-Nr"), lam2=0.4)
    with pytest.raises(UsageError, match="no part that parameter.s. qllm_lam apply"):
        build_method("TF-ISF-p", qllm_lam=0.5)
    with pytest.raises(UsageError, match="method 'Random'"):
        build_method("Random", lam=0.5)
    with pytest.raises(UsageError, match="method 'TF-ISF'.*lam"):  # a context weight without a context
        build_method("TF-ISF", lam=0.5)


def test_nested_parameters_are_the_keywords_spelt_out():
    """``part__param`` (scikit-learn's way) reaches any part; the flat keywords are the parts'
    declared spellings of the same parameters."""
    assert build_method("QLLM-c", similarity__lam=0.5) == build_method("QLLM-c", qllm_lam=0.5)
    assert build_method("QLLM-c", qllm_lam=0.8, lam=0.3) == Interpolated(QLLM(0.8), "case", 0.3)
    assert build_method("Tp-Tg-Nr", gates__0__lam=0.3, gates__1__threshold=0.5, base__lam=0.7) == \
        build_method("Tp-Tg-Nr", lam2=0.3, nwr=0.5, lam=0.7)
    assert build_method("BM25-p", similarity__k1=2.0) == build_method("BM25-p", k1=2.0) == \
        Interpolated(BM25(k1=2.0), "paragraph")
    # a gate's own similarity keeps its parameters: flat keywords stop at the gate ...
    ranker = build_method("QLLM-p+QLLM-g>=0.5", qllm_lam=0.5)
    assert ranker.base.similarity == QLLM(0.5) and ranker.gates[0].similarity == QLLM()
    # ... and nested names reach it
    assert build_method("QLLM-p+QLLM-g>=0.5", gates__0__similarity__lam=0.5).gates[0].similarity == QLLM(0.5)
    assert parse("Tp-Tg-Nr").get_params(deep=True)["gates__1__threshold"] == 0.2
    for bad, message in (({"gates__5__lam": 0.1}, "position"), ({"base__k9": 1}, "no parameter 'k9'"),
                         ({"gates__0__lam": 2.0}, "lambda2")):
        with pytest.raises(UsageError, match=message):
            build_method("Tp-Tg-Nr", **bad)


# ----------------------------------------------------------------------------- exports


def test_public_classes_are_exported():
    for name in ["Gated", "DomainGate", "NoveltyGate", "Expanded", "Gate", "Interpolated", "Recursive", "TFISF", "BM25",
                 "QLLM", "Cosine", "NewWords", "NewWordRatio", "WMDNovelty", "RandomOrder", "Component", "Ranker",
                 "Similarity", "Requirements", "parse_method", "with_params", "build_method"]:
        assert name in statinterp.__all__, name
    assert statinterp.Gated is Gated and statinterp.RandomOrder is RandomOrder and statinterp.parse_method is parse
    assert statinterp.NewWords is NewWords and statinterp.NewWordRatio is NewWordRatio
    assert statinterp.Recursive is Recursive and statinterp.Component is Component


# ----------------------------------------------------------------------------- the grammar, property-based

SIMS = ["TF-ISF", "BM25", "QLLM", "w2vec*", "fastt*"]
simple_names = st.one_of(
    st.sampled_from(["Random", "NW", "NWR", "WMD", "Tp", "Bp", "Qc", "Wr"]),
    st.builds(lambda s, suffix: s + suffix, st.sampled_from(SIMS),
              st.sampled_from(["", "-c", "-o", "-p", "-r", "-g", "-e"])),
)
values = st.decimals(min_value=0, max_value=1, places=2).map(lambda d: format(d.normalize(), "f"))
gates = st.one_of(
    st.sampled_from(["Tg", "Nr", "NW", "NWR"]),
    st.builds(lambda s, e, v: f"{s}-{e}>={v}", st.sampled_from(SIMS), st.sampled_from("ge"), values),
    st.builds(lambda s, e, v: f"gate({s}-{e},{v})", st.sampled_from(SIMS), st.sampled_from("ge"), values),
    st.builds(lambda m, v: f"{m}>={v}", st.sampled_from(["NW", "NWR", "WMD"]), values),
)
names = st.one_of(
    simple_names,
    st.builds(lambda b, g: "+".join([b, *g]), simple_names, st.lists(gates, min_size=1, max_size=3)),
    st.builds(lambda b, g: "-".join([b, *g]), st.sampled_from(["Tp", "Bp", "Qc", "Wr"]),
              st.lists(st.sampled_from(["Tg", "Nr"]), min_size=1, max_size=3)),
)


@settings(max_examples=300, deadline=None)
@given(names)
def test_parse_and_print_round_trip(name):
    ranker = parse(name)
    canonical = str(ranker)
    again = parse(canonical)
    assert again == ranker and hash(again) == hash(ranker)
    assert str(again) == canonical


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="TFISBMQLcoprge-+<>=(),.0123456789 NWRD*", max_size=20))
def test_any_other_text_is_a_clear_usage_error(text):
    try:
        ranker = parse(text)
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert parse(str(ranker)) == ranker


# ----------------------------------------------------------------------------- building is light

BUILD_PROBE = """
import json, sys
from statinterp.rankers.grammar import list_methods, parse
rankers = [parse(name) for name, _ in list_methods() if "w2vec" not in name and "fastt" not in name
           and "GloVe" not in name and not name.startswith("Wr")]
rankers.append(parse("BM25-r+Tg+NWR>=0.3").set_params(base__lam=0.5))
print(len(rankers), json.dumps(sorted(m for m in ("spacy", "gensim", "ot", "sklearn") if m in sys.modules)))
"""


def test_building_a_ranker_imports_neither_spacy_nor_gensim():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", BUILD_PROBE], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    count, heavy = proc.stdout.split(" ", 1)
    assert int(count) > 30 and heavy.strip() == "[]"


def test_a_fitted_model_is_equal_only_to_itself():
    from statinterp.learned.features import FeatureSettings
    from statinterp.learned.model import LearnedRanker

    a = LearnedRanker("linear", FeatureSettings(), ["f"], ["scores"], [], ["t"])
    b = LearnedRanker("linear", FeatureSettings(), ["f"], ["scores"], [], ["t"])
    assert a == a and a != b and len({a, b}) == 2
    a.label = "learned:x"  # a loaded model is named after its file
    assert a.name == "learned:x"
