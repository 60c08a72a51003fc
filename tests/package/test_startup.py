"""Start-up stays light: the CLI's command tree and --help import no heavy library, and the
package's exported names are resolved lazily (PEP 562) but all still there."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import statinterp

HEAVY = ("spacy", "thinc", "torch", "gensim", "scipy", "sklearn")

PROBE = f"""
import json, sys
import statinterp.app.cli
from statinterp.app.cli import cli
for args in (["--help"], ["rank", "--help"]):
    try:
        cli.main(args=args, prog_name="statinterp", standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def test_cli_and_help_import_no_heavy_library():
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    *help_text, last = proc.stdout.splitlines()
    assert any("Usage: statinterp [OPTIONS] COMMAND" in line for line in help_text)
    assert any("Usage: statinterp rank [OPTIONS] TERM" in line for line in help_text)
    assert json.loads(last) == []


@pytest.mark.slow
def test_every_exported_name_resolves_and_is_listed():
    listing = dir(statinterp)
    for name in statinterp.__all__:
        assert getattr(statinterp, name) is not None, name
        assert name in listing, name
    assert set(statinterp._EXPORTS) == set(statinterp.__all__)


def test_from_import_of_exported_names_and_submodules():
    from statinterp import open_corpus, rank
    from statinterp.evaluation.ranking import rank as ranking_rank
    from statinterp.text import analysis
    from statinterp.workflow import open_corpus as workflow_open_corpus

    assert rank is ranking_rank and open_corpus is workflow_open_corpus
    assert analysis.__name__ == "statinterp.text.analysis"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = statinterp.no_such_name
