"""Helpers of the segmentation tests (tests/text)."""

from __future__ import annotations

from statinterp.text.segmentation import sentence_spans


def spans(nlp, text: str) -> list[str]:
    """The sentences ``nlp`` (a segmentation pipeline) cuts ``text`` into, as text."""
    return [text[s:e] for s, e in sentence_spans(nlp(text))]
