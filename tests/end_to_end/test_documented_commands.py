"""Every command the README shows runs as written, and every command the manual shows is one the
command line accepts (issue 37).

* **README**: each ``$ ...`` line of its ``console`` blocks runs, in order, in a fresh folder laid
  out as a clone (``data/``, ``tests/fixtures/``, ``reports/`` and ``../shared`` where the clone
  has them), and must exit 0; ``statinterp review`` (a server) must print its address, then is
  stopped. Its ``python`` block runs there too, from that folder.
* **The manual** (docs/, every page): each ``$ statinterp ...`` line names commands and options
  that exist (checked against the click commands themselves: a renamed option or command fails
  here). Running them all is not possible in a test: several are the hour-long studies.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.support.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
MANUAL = sorted((REPO_ROOT / "docs").rglob("*.md"))


def console_commands(markdown: str) -> list[str]:
    """The ``$ `` lines of the ``console`` blocks of ``markdown``, without trailing ``# comments``."""
    commands = []
    for block in re.findall(r"```console\n(.*?)```", markdown, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                commands.append(_without_comment(line[2:]).strip())
    return commands


def _without_comment(line: str) -> str:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return shlex.join(list(lexer))


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.S)


def unknown_parts(command: str, root: click.Group) -> list[str]:
    """The subcommands and options of a ``statinterp ...`` command line that the CLI lacks."""
    words = shlex.split(command)[1:]
    current: click.Command = root
    problems = []
    for word in words:
        if isinstance(current, click.Group) and not word.startswith("-"):
            sub = current.commands.get(word)
            if sub is None:
                problems.append(f"no command {word!r}")
                break
            current = sub
            continue
        if word.startswith("--") or (word.startswith("-") and len(word) == 2):
            name = word.split("=", 1)[0]
            known = {opt for param in current.params for opt in (*param.opts, *param.secondary_opts)}
            known |= {"--help", "-h"}
            if name not in known:
                problems.append(f"{current.name}: no option {name}")
    return problems


def test_the_command_helpers_read_blocks_and_find_unknown_options():
    text = "x\n```console\n$ statinterp rank vehicle --top 3   # three\nout\n$ ls\n```\n"
    assert console_commands(text) == ["statinterp rank vehicle --top 3", "ls"]
    from statinterp.app.cli import cli

    assert unknown_parts("statinterp rank vehicle --top 3", cli) == []
    assert unknown_parts("statinterp rank vehicle --topp 3", cli) == ["rank: no option --topp"]
    assert unknown_parts("statinterp rnak vehicle", cli) == ["no command 'rnak'"]


def test_every_command_of_the_manual_exists_with_its_options():
    from statinterp.app.cli import cli

    problems = []
    checked = 0
    for page in [README, *MANUAL]:
        for command in console_commands(page.read_text(encoding="utf-8")):
            if command.startswith("statinterp "):
                checked += 1
                problems += [f"{page.relative_to(REPO_ROOT)}: {command}: {p}" for p in unknown_parts(command, cli)]
    assert checked > 30
    assert not problems, "\n".join(problems)


@pytest.fixture
def clone(tmp_path) -> Path:
    """A folder laid out as a fresh clone for the README's commands (links to what they read)."""
    folder = tmp_path / "statinterp-clone"
    folder.mkdir()
    for name in ("data", "reports", "constraints.txt"):
        (folder / name).symlink_to(REPO_ROOT / name)
    (folder / "tests").mkdir()
    (folder / "tests" / "fixtures").symlink_to(REPO_ROOT / "tests" / "fixtures")
    shared = REPO_ROOT.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    return folder


def _statinterp(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "statinterp", command
    return [sys.executable, "-m", "statinterp.app.cli", *words[1:]]


def _run_server_until_it_listens(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    seen = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "http://127.0.0.1:" in line:
                return "".join(seen)
        raise AssertionError("the server stopped before printing its address:\n" + "".join(seen))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


@pytest.mark.slow
def test_every_command_of_the_readme_runs_as_written(clone):
    text = README.read_text(encoding="utf-8")
    commands = [c for c in console_commands(text) if c.startswith("statinterp ")]
    assert len(commands) >= 5, commands
    if "../shared" in text and not (clone.parent / "shared").exists():
        pytest.skip("the README's evaluation commands read ../shared/data, which is absent here")
    env = dict(os.environ, BROWSER="true")   # `review` opens "a browser": the no-op command `true`
    for command in commands:
        argv = _statinterp(command)
        if argv[3] == "review":
            output = _run_server_until_it_listens(argv, clone, env)
            assert "Open http://127.0.0.1:" in output, output
            continue
        done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"$ {command}\n{done.stdout}{done.stderr}"


@pytest.mark.slow
def test_the_readme_python_example_runs_from_a_fresh_folder(clone):
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README has no Python example"
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], cwd=clone, capture_output=True, text=True)
        assert done.returncode == 0, block + done.stdout + done.stderr
        assert done.stdout.strip(), "the example printed nothing"
