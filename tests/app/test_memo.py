"""``statinterp memo`` and the review page's "Export memo" (statinterp/app/memo.py): the memo of a
term read back as Word (python-docx), Markdown and HTML (rendered in the system Chromium where it
is installed; converted by LibreOffice where that is installed)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.app.memo import build_memo, memo_docx, memo_html, memo_markdown, opinion_link
from statinterp.corpus.dataset import Case
from statinterp.corpus.labels import LabelStore
from statinterp.evaluation.ranking import rank
from statinterp.rankers.grammar import build_method

CHROMIUM = Path("/usr/bin/chromium")
LABELS = ("high value", "certain value", "potential value", "no value", "high value", "certain value")


@pytest.fixture(scope="module")
def vehicle(example):
    return example["vehicle"]


def _labelled(vehicle) -> tuple[dict[str, str], object]:
    ranking = rank(build_method("BM25-p"), vehicle)
    ids = [row.sentence_id for row in ranking.rows(len(LABELS))]
    return dict(zip(ids, LABELS, strict=True)), ranking


def _docx_text(data: bytes) -> str:
    from docx import Document

    doc = Document(io.BytesIO(data))
    parts = [p.text for p in doc.paragraphs]
    for table in doc.tables:
        for row in table.rows:
            parts.extend(cell.text for cell in row.cells)
    return "\n".join(parts)


def test_the_memo_quotes_the_reviewers_high_and_certain_sentences_with_every_pin_cite(vehicle):
    labels, ranking = _labelled(vehicle)
    memo = build_memo(vehicle.term, ranking, labels)
    wanted = {sid for sid, lab in labels.items() if lab in ("high value", "certain value")}
    assert memo.reviewed and {e.sentence_id for e in memo.entries} == wanted
    assert [e.number for e in memo.entries] == list(range(1, len(wanted) + 1))
    assert "labelled high value (2) or certain value (2)" in memo.basis
    text = _docx_text(memo_docx(memo))
    for entry in memo.entries:
        assert entry.pin_cite and entry.pin_cite in text
        assert " ".join(entry.text.split()) in text
    assert vehicle.term.provision.text in text and vehicle.term.provision.citation in text
    assert "Table of authorities" in text
    for cite, _, numbers in memo.authorities():
        assert cite in text and numbers
    assert sum(len(n) for _, _, n in memo.authorities()) == len(memo.entries)
    markdown = memo_markdown(memo)
    assert all(e.pin_cite in markdown for e in memo.entries)


def test_without_labels_the_memo_quotes_the_top_ranked_and_says_they_are_unreviewed(vehicle):
    ranking = rank(build_method("BM25-p"), vehicle)
    memo = build_memo(vehicle.term, ranking, {"x": "no value"}, top=5)
    assert not memo.reviewed and len(memo.entries) == 5
    assert {e.sentence_id for e in memo.entries} == {r.sentence_id for r in ranking.rows(5)}
    assert "unreviewed" in memo.basis
    assert "unreviewed" in _docx_text(memo_docx(memo))


def test_entries_are_grouped_by_jurisdiction_then_court_level(vehicle):
    ranking = rank(build_method("BM25-p"), vehicle)
    memo = build_memo(vehicle.term, ranking, None, top=47)
    groups = memo.groups()
    levels = [level for _, by_level in groups for level, _ in by_level]
    assert levels.index("Supreme courts") < levels.index("Intermediate appellate courts")
    shown = [e.number for _, by_level in groups for _, entries in by_level for e in entries]
    assert shown == list(range(1, len(memo.entries) + 1))


def test_opinion_links():
    assert opinion_link(Case("c1", "", name="Fisher v. Univ.", citation="570 U.S. 297")) == \
        "https://www.courtlistener.com/c/U.S./570/297/"
    assert opinion_link(Case("c2", "", name="A v. B", citation="82 F. Supp. 2d 211")) == \
        "https://www.courtlistener.com/c/F.%20Supp.%202d/82/211/"
    assert opinion_link(Case("c3", "", name="Doe v. Roe", source="courtlistener", original_id="2812209")) == \
        "https://www.courtlistener.com/opinion/2812209/doe-v-roe/"
    assert opinion_link(Case("c4", "", name="X v. Y", citation="212 Marl. App. 341")) == ""  # an unknown reporter
    assert opinion_link(Case("c5", "", name="X v. Y")) == ""


def test_memo_command_writes_each_format_and_refuses_others(tmp_path, capsys):
    labels = tmp_path / "labels.sqlite"
    with LabelStore(labels) as store:
        store.set_labels("vehicle", ["o1-l1-s0"], "high value")  # not a sentence: the top ranked are used
    for name in ("memo.docx", "memo.md", "memo.html"):
        out = tmp_path / name
        assert main(["memo", "vehicle", "--method", "BM25-p", "--top", "3", "--labels", str(labels), "--out", str(out),
                     "-q"]) == 0, \
            capsys.readouterr().err
        assert "3 top-ranked, unreviewed sentence(s)" in capsys.readouterr().err
        assert out.stat().st_size > 0
    assert main(["memo", "vehicle", "--out", str(tmp_path / "memo.pdf"), "-q"]) == 2
    err = capsys.readouterr().err
    assert ".docx, .md or .html" in err and "Traceback" not in err
    assert main(["memo", "vehicle", "--out", str(tmp_path / "memo.md"), "-q"]) == 2  # exists, no --force
    assert "already exists" in capsys.readouterr().err


def test_memo_command_uses_the_label_store(vehicle, tmp_path, capsys):
    labels_given, _ = _labelled(vehicle)
    store_path = tmp_path / "labels.sqlite"
    with LabelStore(store_path) as store:
        for sid, label in labels_given.items():
            store.set_labels("vehicle", [sid], label)
    out = tmp_path / "memo.docx"
    assert main(["memo", "vehicle", "--labels", str(store_path), "--method", "BM25-p", "--out", str(out), "-q"]) == 0
    assert "4 labelled sentence(s)" in capsys.readouterr().err
    text = _docx_text(out.read_bytes())
    for sentence in vehicle.term.sentences:
        if labels_given.get(sentence.id) in ("high value", "certain value"):
            assert " ".join(sentence.text.split()) in text


def test_review_page_exports_the_memo(vehicle, tmp_path):
    starlette_testclient = pytest.importorskip("starlette.testclient", reason="starlette/httpx not installed")
    from statinterp.app.review.server import create_app
    from statinterp.app.review.session import ReviewSession

    labels_given, _ = _labelled(vehicle)
    store = LabelStore(tmp_path / "l.sqlite")
    for sid, label in labels_given.items():
        store.set_labels("vehicle", [sid], label)
    session = ReviewSession(vehicle, store, method="BM25-p")
    client = starlette_testclient.TestClient(create_app(session), raise_server_exceptions=False)
    page = client.get("/term/vehicle")
    assert 'id="export-memo" href="/term/vehicle/memo.docx?method=BM25-p"' in page.text
    assert '<span class="authority">(Marlowe intermediate appellate court)</span>' in page.text
    assert re.search(r"continuous score -?[\d.e+-]+ · BM25-p -?[\d.]", page.text)  # the score says whose it is
    r = client.get("/term/vehicle/memo.docx?method=BM25-p")
    assert r.status_code == 200
    assert r.headers["content-disposition"] == 'attachment; filename="vehicle-memo.docx"'
    memo = build_memo(vehicle.term, session.ranking("BM25-p"), labels_given)
    text = _docx_text(r.content)
    assert memo.entries and all(e.pin_cite in text for e in memo.entries)


@pytest.mark.slow
def test_the_html_memo_renders_in_chromium_with_every_pin_cite(vehicle, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium): the HTML memo is not rendered")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    labels, ranking = _labelled(vehicle)
    memo = build_memo(vehicle.term, ranking, labels)
    path = tmp_path / "memo.html"
    path.write_text(memo_html(memo), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox",
                                                                          "--disable-gpu"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            shown = page.inner_text("body")
            assert page.title() == "Research memo: vehicle"
            assert page.locator("h1").inner_text() == "Research memo: “vehicle”"
            assert page.locator(".pin-cite").count() == len(memo.entries)
            for entry in memo.entries:
                assert entry.pin_cite in shown
            assert page.locator("table.authorities tbody tr").count() == len(memo.authorities())
            assert not errors
        finally:
            browser.close()


@pytest.mark.slow
def test_the_docx_memo_converts_in_libreoffice(vehicle, tmp_path):
    office = shutil.which("soffice") or shutil.which("libreoffice")
    if office is None:
        print("LibreOffice is not installed (no soffice on PATH): the .docx is checked by python-docx alone")
        pytest.skip("LibreOffice is not installed (no soffice on PATH)")
    labels, ranking = _labelled(vehicle)
    memo = build_memo(vehicle.term, ranking, labels)
    path = tmp_path / "memo.docx"
    path.write_bytes(memo_docx(memo))
    subprocess.run([office, "--headless", "--convert-to", "txt:Text", "--outdir", str(tmp_path), str(path)],
                   check=True, capture_output=True, timeout=120)
    text = (tmp_path / "memo.txt").read_text(encoding="utf-8-sig")
    assert all(e.pin_cite in text for e in memo.entries)
