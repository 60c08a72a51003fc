"""Reading a reviewer's labels from a file, for relevance feedback (``rank --feedback FILE``).

Two formats:

* JSON lines: one object per line, ``{"sentence_id": "...", "label": ...}`` where ``label`` is a
  label name of the data set (``"high value"``, ``"certain value"``, ``"potential value"``,
  ``"no value"``; any case) or its gain (0..3). Blank lines are skipped; a later line for the
  same sentence replaces an earlier one (a journal's last word wins).
* A data-set term zip (or folder) with labelled sentences (as ``statinterp labels export``
  writes): the labels of its sentences.

Every problem is an :class:`~statinterp.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from statinterp.cache.files import special_kind
from statinterp.corpus.labels import LABEL_GAINS, normalise_label
from statinterp.errors import InputError, check_no_lone_surrogates

__all__ = ["label_gain", "read_label_file"]

#: Refuse label files larger than this (a labels file of the whole data set is well under 1 MB).
MAX_LABEL_FILE_BYTES = 64 * 1024 * 1024


def label_gain(value: object) -> int | None:
    """The gain (0..3) of a label name or gain value; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1, 2, 3):
        return value
    if isinstance(value, float) and value in (0.0, 1.0, 2.0, 3.0):
        return int(value)
    name = normalise_label(value)
    return None if name is None else LABEL_GAINS[name]


def read_label_file(path: str | Path) -> dict[str, int]:
    """Sentence id -> gain (0..3) from a JSON-lines labels file or a labelled data-set zip/folder."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "does not exist (give a JSON-lines labels file or a labelled term zip)")
    kind = special_kind(path)
    if kind is not None:  # a FIFO would block the read forever
        raise InputError(path, f"is {kind}, not a file; give a JSON-lines labels file or a labelled term zip")
    if path.is_dir() or zipfile.is_zipfile(path):
        return _from_dataset(path)
    if path.stat().st_size > MAX_LABEL_FILE_BYTES:
        raise InputError(path, f"is larger than {MAX_LABEL_FILE_BYTES // (1024 * 1024)} MB; not a labels file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark at its head is passed over
    except UnicodeDecodeError:
        raise InputError(path, "is not UTF-8 text (expected JSON lines or a term zip)") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    labels: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = f"line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"is not valid JSON ({exc.msg})", record=record) from None
        if not isinstance(obj, dict):
            raise InputError(path, 'expected an object {"sentence_id": ..., "label": ...}', record=record)
        check_no_lone_surrogates(obj, path, record=record)
        sid = obj.get("sentence_id")
        if not isinstance(sid, str) or not sid:
            raise InputError(path, "missing or not a non-empty string", record=record, field="sentence_id")
        if "label" not in obj:
            raise InputError(path, "missing", record=record, field="label")
        gain = label_gain(obj["label"])
        if gain is None:
            raise InputError(path, f"{obj['label']!r} is not a label ({', '.join(LABEL_GAINS)}) or a gain 0..3",
                             record=record, field="label")
        labels[sid] = gain
    if not labels:
        raise InputError(path, "holds no labels")
    return labels


def _from_dataset(path: Path) -> dict[str, int]:
    from statinterp.corpus.dataset import load_corpus

    corpus = load_corpus(path)
    labels = {s.id: s.gain for term in corpus for s in term.sentences if s.gain is not None}
    if not labels:
        raise InputError(path, "holds no labelled sentence")
    return labels
