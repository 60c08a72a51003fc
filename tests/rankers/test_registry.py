"""Adding a scorer is one module and its test: a scorer defined outside the package, registered
where it is defined, is listed by ``statinterp methods``, parsed and printed by name (with
every context and expansion), tuned by its declared grid and used as a learned feature."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import Interpolated
from tests.support.paths import REPO_ROOT

#: A complete scorer module as a user would write it (it is nowhere in the package).
MODULE = '''
from dataclasses import dataclass

import numpy as np

from statinterp.rankers import registry
from statinterp.rankers.base import Similarity
from statinterp.rankers.lexical import query_term_counts


@dataclass(frozen=True, eq=False, repr=False)
class Overlap(Similarity):
    """Overlap(q, s) = Σ_t min(tf_ts, cap): the capped count of query words in the unit."""

    short_name = "Overlap"
    context_lambda = {"case": 0.3, "opinion": 0.4, "paragraph": 0.5}
    keyword_spellings = {"cap": "overlap_cap"}
    tuning_grid = {"overlap_cap": (1, 2, 3)}

    cap: int = 2

    def evidence(self, query, units, stats, index):
        return np.minimum(query_term_counts(query, units, index), self.cap)

    def combine(self, evidence, query, stats):
        return evidence.sum(axis=1)


registry.register("scorer", "Overlap", Overlap, description="capped count of query words",
                  features=("", "-p", "-g"))
'''


@pytest.fixture()
def overlap(tmp_path, monkeypatch):
    """The module above, imported from a folder outside the package; unregistered afterwards."""
    (tmp_path / "my_overlap.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_overlap

    yield my_overlap
    registry.unregister("scorer", "Overlap")
    sys.modules.pop("my_overlap", None)


def test_a_scorer_defined_outside_the_package_is_a_method_everywhere(overlap, example, capsys):
    from statinterp.app.cli import main
    from statinterp.evaluation.tuning import default_grid
    from statinterp.learned.features import FeatureSettings, extract_features, neighbour_similarities
    from statinterp.rankers.grammar import build_method, list_methods, parse

    Overlap = overlap.Overlap
    # statinterp methods lists it with every context and expansion
    assert main(["methods"]) == 0
    listed = capsys.readouterr().out
    for name in ("Overlap", "Overlap-p", "Overlap-r", "Overlap-g", "Overlap-e"):
        assert f"  {name} " in listed
    assert dict(list_methods())["Overlap"] == "capped count of query words"
    # parsed and printed by name, in compounds too; its declared context weight is the default
    for name in ("Overlap", "Overlap-c", "Overlap-r", "Overlap-g", "Overlap-p+Tg+Nr", "TF-ISF-p+Overlap-g>=0.4"):
        assert parse(name).name == name and parse(parse(name).name) == parse(name)
    assert parse("Overlap-o") == Interpolated(Overlap(), "opinion", 0.4)
    assert build_method("Overlap-p", overlap_cap=1) == build_method("Overlap-p", similarity__cap=1) == \
        Interpolated(Overlap(1), "paragraph")
    # its declared grid is in the default tuning grid of its methods
    assert default_grid("Overlap") == {"overlap_cap": [1, 2, 3]}
    assert default_grid("Overlap-p") == {"lam": [i / 10 for i in range(11)], "overlap_cap": [1, 2, 3]}
    # and among the learned features (the scores it declares, and the neighbours' similarities)
    settings = FeatureSettings()
    assert {"Overlap", "Overlap-p", "Overlap-g"} <= set(settings.score_methods)
    assert settings.score_methods.index("Overlap-g") > settings.score_methods.index("QLLM-g")  # appended
    assert any(isinstance(s, Overlap) for s in neighbour_similarities(False))
    ix = example["vehicle"]
    features = extract_features(ix, FeatureSettings(families=("scores",), standardise="none"))
    scores = parse("Overlap-p").score(ix)
    assert len(set(scores)) > 1 and np.array_equal(features.column("scores:Overlap-p"), scores)


def test_the_registry_is_clean_without_it():
    from statinterp.learned.features import FeatureSettings
    from statinterp.rankers.grammar import parse

    assert registry.get("scorer", "Overlap") is None
    assert "Overlap" not in FeatureSettings().score_methods
    with pytest.raises(UsageError, match="unknown method 'Overlap'"):
        parse("Overlap")


def test_a_similarity_without_a_declared_context_weight_needs_one(overlap):
    from statinterp.rankers.base import Similarity

    class Bare(Similarity):
        short_name = "Bare"

        def evidence(self, query, units, stats, index):
            return np.zeros((len(units), len(query)))

        def combine(self, evidence, query, stats):
            return evidence.sum(axis=1)

    assert Bare().in_context("case", 0.5).weight == 0.5
    with pytest.raises(ValueError, match="declares no default context weight for 'case': give lam"):
        Bare().in_context("case")


def test_a_name_is_registered_once_per_kind():
    with pytest.raises(ValueError, match="registered already"):
        registry.register("scorer", "TF-ISF", object)
    with pytest.raises(ValueError, match="unknown kind"):
        registry.register("measure", "X", object)


def test_the_builtin_parts_and_their_grids():
    assert registry.names("scorer") == ["TF-ISF", "BM25", "QLLM", "w2vec*", "fastt*", "w2vec", "GloVe", "fastt"]
    assert registry.names("context") == ["c", "o", "p", "r"]
    assert registry.names("expansion") == ["g", "e"]
    assert registry.names("novelty") == ["NW", "NWR", "WMD"]
    assert registry.names("gate") == ["Tg", "Nr"]
    assert [(p.name, p.stands_for) for p in registry.entries("base")] == [
        ("Tp", "TF-ISF-p"), ("Bp", "BM25-p"), ("Qc", "QLLM-c"), ("Wr", "w2vec*-r")]
    tenths = [i / 10 for i in range(11)]
    assert registry.candidate_grid() == {"lam": tenths, "lam2": tenths, "nwr": tenths, "qllm_lam": tenths[1:-1]}


def test_the_ranker_parts_page_shows_the_registry():
    doc = (REPO_ROOT / "docs" / "reference" / "ranker-parts.md").read_text(encoding="utf-8")
    assert registry.markdown_table() in doc


@pytest.mark.slow
def test_the_order_of_the_parts_does_not_depend_on_what_was_imported_first():
    import json
    import subprocess

    probe = ("import json, sys\n"
             "for m in sys.argv[1:]: __import__(m)\n"
             "from statinterp.rankers.grammar import list_methods\n"
             "from statinterp.learned.features import FeatureSettings\n"
             "s = FeatureSettings()\n"
             "print(json.dumps([[n for n, _ in list_methods()], s.score_methods, s.vector_methods]))\n")
    runs = [subprocess.run([sys.executable, "-c", probe, *first], capture_output=True, text=True, timeout=300,
                           check=True).stdout
            for first in ([], ["statinterp.rankers.cosine", "statinterp.rankers.gates"],
                          ["statinterp.rankers.base", "statinterp.rankers.novelty"])]
    assert json.loads(runs[0])[0][:2] == ["Random", "TF-ISF"]
    assert runs[1] == runs[0] and runs[2] == runs[0]
