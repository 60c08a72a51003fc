"""Relevance labels of the annotated data set and their NDCG gains."""

from __future__ import annotations

#: Gain of each label, as used for NDCG (Savelka & Ashley's annotation scheme).
LABEL_GAINS: dict[str, int] = {
    "high value": 3,
    "certain value": 2,
    "potential value": 1,
    "no value": 0,
}


def normalise_label(raw: object) -> str | None:
    """Return the canonical label for ``raw`` or ``None`` if it is not a known label.

    Labels are matched case-insensitively after stripping surrounding whitespace.
    """
    if not isinstance(raw, str):
        return None
    key = " ".join(raw.split()).lower()
    return key if key in LABEL_GAINS else None


def gain(label: str | None) -> int | None:
    """Gain of a canonical label, ``None`` for an unlabelled sentence."""
    return None if label is None else LABEL_GAINS[label]
