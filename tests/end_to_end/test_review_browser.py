"""End to end in a real browser: `statinterp review` driven by Playwright with the system Chromium.

Fixed order: opens the page, labels three sentences with the keyboard (with a move and an undo
on the way), opens a sentence's context, re-ranks with the labels, exports the term zip through
the button and checks the file. Continuous mode (the default): labels by keyboard, sees the rest
re-ranked and the estimate of what is left move with every label, reloads and resumes. Saves
docs/review-ranking.png and docs/review-context.png (the
README shows them). Skips, saying why, where /usr/bin/chromium (``apt-get install chromium``)
or the playwright package is missing; never downloads a browser.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from statinterp.corpus.dataset import load_corpus
from statinterp.corpus.labels import LabelStore
from tests.support.paths import REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
DOCS = REPO_ROOT / "docs"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium); the browser test needs the system one")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.mark.slow
def test_label_rerank_export_in_chromium(browser, review_server, example_with_copy, tmp_path):
    labels = tmp_path / "labels.sqlite"
    _, url = review_server("vehicle", "--data", str(example_with_copy), "--labels", str(labels), "--fixed-order")
    page = browser.new_page(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    dialogs: list[str] = []
    accept = {"copies": False}

    def on_dialog(dialog):
        dialogs.append(dialog.message)
        dialog.accept() if accept["copies"] else dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(url)
    cards = page.locator("li.card")
    assert cards.count() == 20
    ids = [cards.nth(i).get_attribute("data-sid") for i in range(4)]
    progress = page.locator("#n-labelled")

    page.keyboard.press("1")  # no cursor yet: the first card, high value; the cursor rests on it
    progress.filter(has_text="1").wait_for()
    page.keyboard.press("j")  # then "j, 1-4" labels the next card: the second, certain value
    page.keyboard.press("2")
    progress.filter(has_text="2").wait_for()
    page.keyboard.press("j")  # skip the third
    page.keyboard.press("j")
    page.keyboard.press("4")  # fourth: no value ...
    progress.filter(has_text="3").wait_for()
    page.keyboard.press("u")  # ... undone
    progress.filter(has_text="2").wait_for()
    page.keyboard.press("3")  # and labelled potential value instead
    progress.filter(has_text="3").wait_for()
    assert [cards.nth(i).get_attribute("data-label") for i in range(4)] == \
        ["high value", "certain value", "", "potential value"]
    assert page.locator("#count-1").inner_text() == "1" and page.locator("#count-3").inner_text() == "1"
    with LabelStore(labels) as store:  # on disk already, not in the browser
        assert store.labels("vehicle") == {ids[0]: "high value", ids[1]: "certain value", ids[3]: "potential value"}

    page.evaluate("window.scrollTo(0, 0); document.getElementById('toast').className = ''")
    page.wait_for_timeout(400)  # the toast fades out
    DOCS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS / "review-ranking.png"))

    page.keyboard.press("k")  # back to the third card (the cursor stayed on the fourth), and open its context
    page.keyboard.press("c")
    third = cards.nth(2)
    third.locator(".context-opinion mark.sentence").wait_for()
    assert third.locator(".context-paragraph mark.sentence").count() == 1
    page.evaluate("document.getElementById('toast').className = ''")
    page.wait_for_timeout(400)
    third.screenshot(path=str(DOCS / "review-context.png"))

    page.click("#rerank")
    page.wait_for_url("**order=feedback**")
    assert "Re-ranked the unlabelled sentences with your 3 labels" in page.locator(".banner").inner_text()
    assert page.locator(".moved").count() > 0  # what moved is marked

    with page.expect_download() as info:
        page.click("#export")
    exported = tmp_path / "exported.zip"
    info.value.save_as(str(exported))
    term = load_corpus(exported).term("vehicle")
    assert {s.id: s.label for s in term.sentences if s.label} == \
        {ids[0]: "high value", ids[1]: "certain value", ids[3]: "potential value"}
    assert len(term.sentences) == 48

    # a sentence with a near-duplicate: labelling it asks whether to label the copy too
    page.goto(url + "?q=traffic+code%2C+moreover")
    assert cards.count() == 1 and "+1 near-duplicate" in cards.nth(0).inner_text()
    card = cards.nth(0)
    pair = [card.get_attribute("data-sid")] + json.loads(card.get_attribute("data-copies"))
    accept["copies"] = True
    before = len(dialogs)
    page.keyboard.press("1")
    page.locator('li.card[data-label="high value"]').wait_for()
    assert len(dialogs) == before + 1 and "Also label its 1 near-duplicate" in dialogs[-1]
    with LabelStore(labels) as store:
        assert [store.labels("vehicle").get(sid) for sid in pair] == ["high value", "high value"]
    assert not problems, problems


def _watched_page(browser, url: str):
    """A page at ``url`` and the list of its console errors and uncaught exceptions."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(url)
    return page, problems


@pytest.mark.slow
def test_continuous_mode_in_chromium(browser, review_server, tmp_path):
    labels = tmp_path / "labels.sqlite"
    _, url = review_server("vehicle", "--labels", str(labels), "-m", "TF-ISF-p")
    page, problems = _watched_page(browser, url)
    cards = page.locator("li.card")
    resting = page.locator("#cont-labels")
    assert resting.inner_text() == "0"

    def shown() -> list[str]:
        return [cards.nth(i).get_attribute("data-sid") for i in range(cards.count())]

    before = shown()
    estimates = [page.locator("#left-expected").inner_text()]
    for n, key in enumerate(["1", "4", "2", "4", "4"], start=1):
        page.keyboard.press("j")  # the next card (the first j: the top card) ...
        page.keyboard.press(key)  # ... labelled; the rest below it is re-ranked
        resting.filter(has_text=str(n)).wait_for()
        page.locator(f'#ranking[data-reranks="{n}"]').wait_for(state="attached")
        estimates.append(page.locator("#left-expected").inner_text())
    read = shown()[:5]
    assert all(cards.nth(i).get_attribute("data-label") for i in range(5))
    assert int(page.locator("#ranking").get_attribute("data-reranks")) == 5
    assert shown()[5:] != [sid for sid in before if sid not in read]  # the rest moved
    assert len(set(estimates)) > 1  # the estimate of what is left moves with the labels
    with LabelStore(labels) as store:
        assert set(store.labels("vehicle")) == set(read)

    page.reload()  # resume: the order rests on the 5 labels, what was read stays on top
    assert resting.inner_text() == "5"
    assert shown()[:5] == read and not cards.nth(5).get_attribute("data-label")
    for _ in range(6):
        page.keyboard.press("j")
    page.keyboard.press("3")
    resting.filter(has_text="6").wait_for()
    with LabelStore(labels) as store:
        assert len(store.labels("vehicle")) == 6
    assert not problems, problems


def _ranks(page) -> list[int]:
    return [int(x) for x in page.eval_on_selector_all("#ranking li.card .rank", "els => els.map(e => e.textContent)")]


@pytest.mark.slow
def test_continuous_mode_keeps_its_numbers_and_j_then_a_label_labels_every_card_in_order(browser, review_server,
                                                                                          tmp_path):
    """Issue 36: after every live re-rank the numbers are the new order's, strictly increasing down
    the page (no repeated or stale number), and "j, then 1-4", 20 times, labels the 20 cards of the
    page in order; the score shown says whose it is."""
    labels = tmp_path / "labels.sqlite"
    _, url = review_server("vehicle", "--labels", str(labels), "-m", "BM25-p")
    page, problems = _watched_page(browser, url)
    cards = page.locator("li.card")
    assert "labels every card in order" in page.locator("#keys").inner_text()
    assert cards.count() == 20 and _ranks(page) == list(range(1, 21))
    keys = "14243124312431243124"
    labelled: list[str] = []
    for n, key in enumerate(keys, start=1):
        page.keyboard.press("j")
        sid = page.locator("li.card.current").get_attribute("data-sid")
        page.keyboard.press(key)
        page.locator(f'#ranking[data-reranks="{n}"]').wait_for(state="attached")
        labelled.append(sid)
        ranks = _ranks(page)
        assert ranks == sorted(set(ranks)), (n, ranks)  # strictly increasing down the page
        assert page.locator("li.card.current").get_attribute("data-sid") == sid  # the cursor stayed
    assert len(set(labelled)) == 20  # every card labelled once, none skipped
    assert _ranks(page) == list(range(1, 21))
    assert [cards.nth(i).get_attribute("data-sid") for i in range(20)] == labelled  # read order, in place
    score = cards.nth(0).locator(".score").inner_text()
    assert score.startswith("continuous score") and "BM25-p" in score
    with LabelStore(labels) as store:
        assert list(store.labels("vehicle")) and set(store.labels("vehicle")) == set(labelled)
    page.reload()  # a reload shows the same page
    assert _ranks(page) == list(range(1, 21))
    assert [cards.nth(i).get_attribute("data-sid") for i in range(20)] == labelled
    assert not problems, problems

