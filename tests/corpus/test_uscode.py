"""A provision's text from a US Code title in USLM XML (statinterp/corpus/provisions.py) and the
command-line options that use it (--provision-cite, --uscode), and the one-line warning of a
term without a provision."""

from __future__ import annotations

import json

import pytest

from statinterp.app.cli import main
from statinterp.corpus.provisions import parse_usc_cite, usc_provision
from statinterp.errors import InputError, UsageError
from tests.support.paths import FIXTURES

TITLE18 = FIXTURES / "uscode" / "usc18-excerpt.xml"


@pytest.mark.parametrize(("cite", "identifier", "shown"), [
    ("18 U.S.C. § 1839(3)", "/us/usc/t18/s1839/3", "18 U.S.C. § 1839(3)"),
    ("18 USC 1839(3)(B)", "/us/usc/t18/s1839/3/B", "18 U.S.C. § 1839(3)(B)"),
    ("17 U.S.C. §1201(a)(3)", "/us/usc/t17/s1201/a/3", "17 U.S.C. § 1201(a)(3)"),
    ("26 U.S.C.A. § 704", "/us/usc/t26/s704", "26 U.S.C. § 704"),
    ("42 U.S.C. § 2000e-2(k)", "/us/usc/t42/s2000e-2/k", "42 U.S.C. § 2000e-2(k)"),
])
def test_cites_become_uslm_identifiers(cite, identifier, shown):
    assert parse_usc_cite(cite) == (identifier, shown)


def test_a_cite_that_is_no_us_code_cite_is_refused():
    with pytest.raises(UsageError, match="give a US Code citation"):
        parse_usc_cite("Cal. Penal Code § 187")


def test_the_provision_text_keeps_its_levels_and_drops_credits_and_notes():
    text, shown = usc_provision(TITLE18, "18 U.S.C. § 1839(3)")
    assert shown == "18 U.S.C. § 1839(3)"
    lines = text.split("\n")
    assert lines[0].startswith("(3) the term “trade secret” means all forms and types of financial")
    assert lines[0].endswith("or in writing if—")
    assert lines[1] == "(A) the owner thereof has taken reasonable measures to keep such information secret; and"
    assert lines[2].startswith("(B) the information derives independent economic value")
    assert len(lines) == 3
    whole, _ = usc_provision(TITLE18, "18 U.S.C. § 1839")
    assert whole.startswith("§ 1839. Definitions As used in this chapter—")
    assert "Pub. L." not in whole and "placeholder" not in whole  # source credit and notes left out
    assert "(4) the term “owner”" in whole


def test_bad_files_are_one_clear_error_naming_the_file(tmp_path):
    with pytest.raises(InputError, match=r"holds no provision /us/usc/t18/s1839/9 \(18 U.S.C. § 1839\(9\)\)"):
        usc_provision(TITLE18, "18 U.S.C. § 1839(9)")
    broken = tmp_path / "usc18.xml"
    broken.write_text("<uscDoc><main>", encoding="utf-8")
    with pytest.raises(InputError, match="not well-formed XML"):
        usc_provision(broken, "18 U.S.C. § 1839(3)")
    other = tmp_path / "other.xml"
    other.write_text('<html><section identifier="/us/usc/t18/s1"/></html>', encoding="utf-8")
    with pytest.raises(InputError, match="is not USLM XML"):
        usc_provision(other, "18 U.S.C. § 1839(3)")
    with pytest.raises(InputError, match="is not a file"):
        usc_provision(tmp_path / "missing.xml", "18 U.S.C. § 1839(3)")


@pytest.mark.slow
def test_rank_reads_the_provision_from_the_title_and_keeps_the_cite_with_it(capsys):
    args = ["rank", "vehicle", "-m", "BM25-p", "-n", "2", "-q", "--provision-cite", "18 U.S.C. § 1839(3)",
            "--uscode", str(TITLE18)]
    assert main([*args, "--format", "json"]) == 0
    provision = json.loads(capsys.readouterr().out)["provision"]
    assert provision["citation"] == "18 U.S.C. § 1839(3)"
    assert provision["text"] == usc_provision(TITLE18, "18 U.S.C. § 1839(3)")[0]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"provision: 18 U.S.C. § 1839(3) (from {TITLE18})"


@pytest.mark.parametrize(("extra", "message"), [
    (["--uscode", str(TITLE18)], "--uscode reads the provision --provision-cite names"),
    (["--provision-cite", "18 U.S.C. § 1839(3)"], "needs the provision's text"),
    (["--provision-cite", "18 U.S.C. § 1839(3)", "--uscode", str(TITLE18), "--provision", "x y z"], "not both"),
    (["--provision-cite", "18 U.S.C. § 1839(9)", "--uscode", str(TITLE18)], "holds no provision"),
])
def test_provision_options_misused_are_one_line_exit_2(capsys, extra, message):
    assert main(["rank", "vehicle", "-q", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_provision_cite_names_a_given_text(capsys):
    assert main(["rank", "vehicle", "-m", "BM25-p", "-n", "1", "-q", "--format", "json", "--provision",
                 "No vehicles in the park.", "--provision-cite", "Park Ord. § 1"]) == 0
    provision = json.loads(capsys.readouterr().out)["provision"]
    assert provision == {"citation": "Park Ord. § 1", "text": "No vehicles in the park."}


@pytest.mark.slow
def test_a_term_without_a_provision_gets_one_warning_line_naming_the_fix(tmp_path, capsys):
    from statinterp.app.collection_commands import example_sources
    from statinterp.collection.ingest import ingest

    folder = tmp_path / "c"
    ingest([example_sources()], folder, citations=False)
    assert main(["rank", "park", "--collection", str(folder), "-n", "1"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1, warned
    assert "term 'park' has no source provision" in warned[0]
    assert "--provision-cite CITE --uscode FILE" in warned[0] and "scores:" not in warned[0]
