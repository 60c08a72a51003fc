"""Bad input made from the shipped example corpus (term ``vehicle``): its records, writers of
term files and zips with some bytes replaced, and checks that a load or the CLI fails with one
clear line (tests of the loaders, the provisions and the CLI on bad input)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, settings

from statinterp.corpus.dataset import KINDS, load_corpus
from statinterp.errors import StatinterpError
from tests.support.cli import assert_one_line_error, capture_main
from tests.support.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "data" / "example"
PROVISIONS = REPO_ROOT / "data" / "provisions.json"

#: Hypothesis settings of the fuzz tests: 60 inputs each, no deadline (loading takes a while).
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def example_records() -> dict[str, dict[str, dict]]:
    return {k: json.loads((EXAMPLE / f"vehicle-{k}.json").read_text(encoding="utf-8")) for k in KINDS}


RECORDS = example_records()
ALL_IDS = {rid for kind in RECORDS.values() for rid in kind}


def write_term(folder: Path, records: dict, raw: dict[str, bytes] | None = None) -> Path:
    """Write ``vehicle-KIND.json`` files; ``raw`` gives the exact bytes of some of them."""
    folder.mkdir(parents=True, exist_ok=True)
    for kind in KINDS:
        path = folder / f"vehicle-{kind}.json"
        if raw and kind in raw:
            path.write_bytes(raw[kind])
        elif kind in records:
            path.write_text(json.dumps(records[kind]), encoding="utf-8")
    return folder


def zip_bytes(members: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


GOOD_MEMBERS = {f"vehicle-{k}.json": json.dumps(v) for k, v in RECORDS.items()}
GOOD_ZIP = zip_bytes(GOOD_MEMBERS)


def cli_error(data: Path, *needles: str, extra: tuple[str, ...] = ()) -> str:
    """Run ``statinterp rank vehicle --data DATA`` in-process; it must fail with one clean line."""
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--data", str(data), *extra])
    assert out == ""
    return assert_one_line_error(code, err, *needles)


def load_or_error(data: Path, *needles: str):
    """Load ``data``: return the corpus, or check that the CLI reports the error as one line."""
    try:
        return load_corpus(data)
    except StatinterpError:
        cli_error(data, *needles)
        return None


def dumps_pairs(pairs: list[tuple[str, object]]) -> bytes:
    """A JSON object with exactly these key/value pairs (keys may repeat)."""
    return ("{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}").encode("utf-8")


def with_escape(path: Path, record: str, field: str, escape: str) -> None:
    """Rewrite ``path`` so that ``record``'s ``field`` ends with the raw JSON escape ``escape``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[record][field] = data[record][field] + "@@ESC@@"
    path.write_text(json.dumps(data).replace("@@ESC@@", escape), encoding="utf-8")
