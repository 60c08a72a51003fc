"""benchmarks/ingest.py renders its RESULTS.md section from any subset of sections it ran."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.ingest import markdown

RECORDED = Path(__file__).with_name("ingest.json")


def test_the_section_renders_without_citations_or_growth():
    res = json.loads(RECORDED.read_text(encoding="utf-8"))
    full = markdown(res)
    assert "Citations (eyecite" in full and "Ingest with analysis, 1,000" in full
    for key in ("citations", "citation_source"):
        res.pop(key, None)
    res["throughput"].pop("citations", None)
    res["growth"], res["analysed_growth"] = [], []
    part = markdown(res)  # `--only throughput` into an empty WORK: no citations, no growth rows
    assert "Citations (eyecite" not in part and "Ingest with analysis" not in part
    assert "**Analysed ingest / bare spaCy" in part and "### All of CAP" in part
