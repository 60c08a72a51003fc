"""`statinterp review`, the label store and `statinterp labels export/import` (issue 18).

Route-level tests drive the Starlette app with its TestClient on the shipped example data
(term ``vehicle``, 47 sentences) or on a copy of it with ``<script>`` planted in the case law;
one test runs the real command in a subprocess and SIGKILLs it right after a label.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import sys

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.app.review.server import create_app
from statinterp.app.review.session import Filters, ReviewSession
from statinterp.corpus.dataset import load_corpus
from statinterp.corpus.labels import LabelStore, default_store_path
from statinterp.errors import InputError, UsageError
from statinterp.workflow import example_data_path, open_corpus, prepare_corpus
from tests.support.paths import FIXTURES

starlette_testclient = pytest.importorskip("starlette.testclient", reason="starlette/httpx not installed")
TestClient = starlette_testclient.TestClient

SCRIPT = '<script>alert("pwned")</script>'


@pytest.fixture(scope="module")
def vehicle(example):
    return example["vehicle"]


def client_for(session: ReviewSession, **kw) -> TestClient:
    return TestClient(create_app(session, **kw), raise_server_exceptions=False)


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)


def sentence_ids(html: str) -> list[str]:
    return re.findall(r'<li class="card[^"]*" id="s-\d+" data-sid="([^"]+)"', html)


def start(client: TestClient) -> tuple[str, list[str]]:
    page = client.get("/term/vehicle")
    assert page.status_code == 200
    return csrf_of(page.text), sentence_ids(page.text)


def post_label(client, token, ids, label):
    return client.post("/term/vehicle/labels", json={"sentence_ids": ids, "label": label},
                       headers={"X-CSRF-Token": token})


# ------------------------------------------------------------------------------------------ label store


def test_store_is_durable_keeps_last_write_and_journal(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        t1 = store.set_labels("vehicle", ["a", "b"], "high value")
        t2 = store.set_labels("vehicle", ["a"], "no value", note="a quote of the code")
        store.set_note("vehicle", "b", "check the dissent")
        assert t2 >= t1
    with LabelStore(path) as store:  # reopened: everything is there
        recs = store.records("vehicle")
        assert recs["a"].label == "no value" and recs["a"].note == "a quote of the code"
        assert recs["b"].label == "high value" and recs["b"].note == "check the dissent"
        assert store.labels("other") == {}
        journal = store.journal("vehicle")
        assert [(sid, label) for _, sid, label, _, _ in journal] == [
            ("a", "high value"), ("b", "high value"), ("a", "no value"), ("b", "high value")]
        store.set_labels("vehicle", ["a"], None)  # cleared, the journal keeps the history
        assert store.labels("vehicle") == {"b": "high value"}
        assert len(store.journal("vehicle")) == 5
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_a_store_written_before_schema_versions_is_migrated_and_keeps_everything(tmp_path):
    """tests/fixtures/label_store/unversioned.sqlite was written by the label store of main at
    d196342 (no schema version): opening it migrates it to SCHEMA_VERSION in place."""

    from statinterp.corpus.labels import SCHEMA_VERSION

    path = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURES / "label_store" / "unversioned.sqlite", path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 0
    db.close()
    with LabelStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 1
        recs = store.records("example_term")
        assert recs["s1"].label == "high value" and recs["s1"].note == "quotes the provision"
        assert recs["s2"].label is None and recs["s3"].label == "no value"
        assert store.records("other_term")["t1"].note == "to check"
        assert [(sid, label) for _, sid, label, _, _ in store.journal("example_term")] == [
            ("s1", "high value"), ("s2", "high value"), ("s3", "no value"), ("s2", None)]
        store.set_labels("example_term", ["s4"], "certain value")  # writable after the migration
    db = sqlite3.connect(path)
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "journal_term" in indexes and db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()
    with LabelStore(path) as store:  # opened again: nothing to migrate, nothing lost
        assert store.labels("example_term") == {"s1": "high value", "s3": "no value", "s4": "certain value"}
    with LabelStore(tmp_path / "new.sqlite") as store:  # a new store starts at the current version
        assert store.schema_version == SCHEMA_VERSION


def test_a_store_from_a_newer_statinterp_is_refused_untouched(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        store.set_labels("vehicle", ["a"], "high value")
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="newer statinterp.*schema 99"):
        LabelStore(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 99
    assert db.execute("SELECT label FROM labels").fetchall() == [("high value",)]
    db.close()


def test_two_store_handles_on_one_file_see_each_other(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as one, LabelStore(path) as two:
        one.set_labels("vehicle", ["a"], "high value")
        assert two.labels("vehicle") == {"a": "high value"}
        two.set_labels("vehicle", ["a"], "potential value")
        assert one.labels("vehicle") == {"a": "potential value"}


def test_store_refuses_other_files_and_bad_labels(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(InputError, match="junk.sqlite"):
        LabelStore(junk)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="not a statinterp label store"):
        LabelStore(other)
    with LabelStore(tmp_path / "ok.sqlite") as store:
        with pytest.raises(UsageError, match="unknown label"):
            store.set_labels("vehicle", ["a"], "very high")


def test_default_store_path_never_writes_into_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "statinterp" / "labels"
    data = tmp_path / "data"
    data.mkdir()
    z = data / "term.zip"
    z.write_bytes(b"")
    folder_store, zip_store, shipped = default_store_path(data), default_store_path(z), default_store_path(None)
    assert folder_store.parent == user and zip_store.parent == user and shipped.parent == user
    assert len({folder_store, zip_store, shipped}) == 3  # keyed by the data
    assert folder_store.name.startswith("data-") and zip_store.name.startswith("term-")
    assert example_data_path().resolve() not in shipped.parents
    # a store an earlier version left beside the data is still used
    (data / "statinterp-labels.sqlite").write_bytes(b"")
    (data / "term.labels.sqlite").write_bytes(b"")
    assert default_store_path(data) == data.resolve() / "statinterp-labels.sqlite"
    assert default_store_path(z) == data.resolve() / "term.labels.sqlite"


# ------------------------------------------------------------------------------------------ pages


def test_every_page_renders(vehicle, tmp_path):
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session)
    assert client.get("/", follow_redirects=False).headers["location"] == "/term/vehicle"
    assert client.get("/term/Vehicle?page=2", follow_redirects=False).headers["location"] == "/term/vehicle?page=2"
    page = client.get("/term/vehicle")
    assert page.status_code == 200
    html = page.text
    assert "Park Ord." in html and '<mark class="term">vehicles</mark>' in html  # provision, term highlighted
    assert "0</strong> of 47 sentences labelled" in html
    ids = sentence_ids(html)
    assert len(ids) == 20 and ids[0] == session.ranking().rows(1)[0].sentence_id
    for query in ("method=Tp-Nr", "method=BM25-p&page=2", "unlabelled=1", "label=high+value", "q=bicycle",
                  "court=Court+of+Appeals+of+Marlowe%2C+Second+District", "year=2004", "all=1", "page=99"):
        r = client.get(f"/term/vehicle?{query}")
        assert r.status_code == 200, query
    r = client.get("/term/vehicle?q=bicycle")
    shown = sentence_ids(r.text)
    assert shown and all("bicycle" in session.sentence(s).text.lower() for s in shown)
    r = client.get("/term/vehicle?year=2004")
    shown = sentence_ids(r.text)
    assert shown and all(vehicle.term.cases[session.sentence(s).case_id].date.startswith("2004") for s in shown)
    assert len(sentence_ids(client.get("/term/vehicle?page=3").text)) == 7  # 47 = 20 + 20 + 7
    context = client.get(f"/term/vehicle/sentence/{ids[0]}/context")
    assert context.status_code == 200
    assert context.text.count('<mark class="sentence">') == 2  # in its paragraph and in its opinion
    explain = client.get(f"/term/vehicle/sentence/{ids[0]}/explain?method=Tp-Tg-Nr")
    assert explain.status_code == 200 and "gates" in explain.text
    assert client.get("/static/review.js").status_code == 200
    assert client.get("/static/review.css").status_code == 200


def test_unknown_things_get_a_404_page_not_a_traceback(vehicle, tmp_path):
    client = client_for(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    for url in ("/term/other", "/term/vehicle/sentence/nope/context", "/term/vehicle/sentence/nope/explain",
                "/nothing/here", "/term/vehicle?method=NoSuchMethod", "/static/../../etc/passwd",
                "/term/other/export.zip"):
        r = client.get(url)
        assert r.status_code == 404, url
        assert "Traceback" not in r.text
    assert "not a candidate" in client.get("/term/vehicle/sentence/nope/context").text
    assert client.get("/term/vehicle?page=x").status_code == 400
    assert client.get("/term/vehicle?label=bogus").status_code == 400


def test_data_set_labels_hidden_unless_asked(vehicle, tmp_path):
    store = LabelStore(tmp_path / "l.sqlite")
    hidden = client_for(ReviewSession(vehicle, store)).get("/term/vehicle").text
    assert "data set:" not in hidden
    sid = sentence_ids(hidden)[0]
    explain = client_for(ReviewSession(vehicle, store)).get(f"/term/vehicle/sentence/{sid}/explain").text
    assert "label: unlabelled" in explain  # not the data set's 'no value'
    shown = client_for(ReviewSession(vehicle, store, show_data_labels=True)).get("/term/vehicle").text
    assert "data set: no value" in shown


# ------------------------------------------------------------------------------------------ labelling


def test_labels_persist_across_a_server_restart_and_tabs_share_them(vehicle, tmp_path):
    path = tmp_path / "l.sqlite"
    tab1 = client_for(ReviewSession(vehicle, LabelStore(path)))
    token, ids = start(tab1)
    r = post_label(tab1, token, ids[:2], "certain value")
    assert r.status_code == 200
    body = r.json()
    assert body["counts"]["certain value"] == 2 and body["counts"]["labelled"] == 2
    assert body["previous"] == {ids[0]: None, ids[1]: None}
    r = tab1.post("/term/vehicle/note", json={"sentence_id": ids[0], "note": "defines it by reference"},
                  headers={"X-CSRF-Token": token})
    assert r.status_code == 200

    tab2 = client_for(ReviewSession(vehicle, LabelStore(path)))  # a second tab ... after a restart, too
    token2, _ = start(tab2)
    html = tab2.get("/term/vehicle").text
    assert html.count('aria-pressed="true"') == 2 and "defines it by reference" in html
    assert html.count('title="last changed 20') == 2  # each label shows when it was last written
    assert post_label(tab2, token2, [ids[0]], "high value").json()["previous"] == {ids[0]: "certain value"}
    html = tab1.get("/term/vehicle").text  # the first tab sees it on refresh
    assert f'data-sid="{ids[0]}" data-label="high value"' in html
    assert ">1</strong> of 47" not in html and ">2</strong> of 47 sentences labelled" in html
    assert "45 of 47 rows shown" in tab1.get("/term/vehicle?unlabelled=1").text
    assert len(sentence_ids(tab1.get("/term/vehicle?label=high+value").text)) == 1
    r = post_label(tab1, token, [ids[0]], "")  # clearing (undo of a first label)
    assert r.json()["labels"] == {ids[0]: None} and r.json()["counts"]["labelled"] == 1


def test_malformed_label_requests_are_rejected_with_a_message(vehicle, tmp_path):
    client = client_for(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    token, ids = start(client)
    cases = [({"sentence_ids": ids[:1], "label": "very high"}, 400, "unknown label"),
             ({"sentence_ids": ids[:1], "label": 3}, 400, "label must be a string"),
             ({"sentence_ids": [], "label": "high value"}, 400, "non-empty list"),
             ({"sentence_ids": "x", "label": "high value"}, 400, "non-empty list"),
             ({"sentence_ids": ["nope"], "label": "high value"}, 404, "not a candidate"),
             ({"sentence_ids": ids[:1], "label": "high value", "note": "x" * 5000}, 400, "at most")]
    for body, status, message in cases:
        r = client.post("/term/vehicle/labels", json=body, headers={"X-CSRF-Token": token})
        assert r.status_code == status, body
        assert message in r.json()["error"]
    r = client.post("/term/vehicle/labels", content=b"{not json", headers={"X-CSRF-Token": token,
                                                                            "Content-Type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    assert client.get("/term/vehicle/labels").status_code == 405
    assert ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")).counts()["labelled"] == 0


def test_csrf_is_required_for_every_state_change(vehicle, tmp_path):
    store = LabelStore(tmp_path / "l.sqlite")
    client = client_for(ReviewSession(vehicle, store))
    token, ids = start(client)
    body = {"sentence_ids": ids[:1], "label": "high value"}
    assert client.post("/term/vehicle/labels", json=body).status_code == 403
    assert client.post("/term/vehicle/labels", json=body, headers={"X-CSRF-Token": "0" * 64}).status_code == 403
    other = client_for(ReviewSession(vehicle, store))  # another browser: its own session and token
    other_token, _ = start(other)
    assert other_token != token
    assert client.post("/term/vehicle/labels", json=body, headers={"X-CSRF-Token": other_token}).status_code == 403
    assert client.post("/term/vehicle/note", json={"sentence_id": ids[0], "note": "x"}).status_code == 403
    assert client.post("/term/vehicle/rerank", data={"method": "TF-ISF-p"}).status_code == 403
    fresh = client_for(ReviewSession(vehicle, store))  # no session cookie at all
    assert fresh.post("/term/vehicle/labels", json=body, headers={"X-CSRF-Token": token}).status_code == 403
    assert store.labels("vehicle") == {}
    assert client.post("/term/vehicle/labels", json=body, headers={"X-CSRF-Token": token}).status_code == 200
    cookie = client.get("/term/vehicle").headers.get("set-cookie", "") or ""
    page = client_for(ReviewSession(vehicle, store)).get("/term/vehicle")
    assert "httponly" in page.headers["set-cookie"].lower() and "samesite=strict" in page.headers["set-cookie"].lower()
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert cookie == ""  # a known session is not re-issued


def test_access_token_and_host_checks(vehicle, tmp_path):
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session, access_token="s3cret")
    assert client.get("/term/vehicle").status_code == 403
    assert client.get("/static/review.css").status_code == 403
    r = client.get("/term/vehicle?token=wrong")
    assert r.status_code == 403
    r = client.get("/term/vehicle?token=s3cret&page=2", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/term/vehicle?page=2"
    assert client.get("/term/vehicle").status_code == 200  # the cookie now carries it
    loopback = TestClient(create_app(session, allowed_hosts=["127.0.0.1", "localhost"]), base_url="http://evil.example")
    assert loopback.get("/term/vehicle").status_code == 400
    ok = TestClient(create_app(session, allowed_hosts=["127.0.0.1", "localhost"]), base_url="http://127.0.0.1:8765")
    assert ok.get("/term/vehicle").status_code == 200


# ------------------------------------------------------------------------------------------ escaping


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, analysis_cache_dir):
    """The example data with a <script> planted in a case name and in the text of every level."""
    folder = tmp_path_factory.mktemp("hostile") / "data"
    shutil.copytree(example_data_path(), folder)
    for kind in ("case", "opinion", "paragraph", "sentence"):
        f = folder / f"vehicle-{kind}.json"
        data = json.loads(f.read_text())
        for rec in data.values():
            rec["text"] = rec["text"].replace("self-propelled", f"self-propelled {SCRIPT}")
            if kind == "case":
                rec["short_name"] = f"{SCRIPT} v. Doe & <b>Roe</b>"
        f.write_text(json.dumps(data))
    prepared = prepare_corpus(open_corpus(folder), cache_dir=analysis_cache_dir)
    return prepared["vehicle"]


def test_case_law_text_is_escaped_everywhere(hostile, tmp_path):
    session = ReviewSession(hostile, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session)
    planted = next(s.id for s in hostile.sentences if SCRIPT in s.text)
    pages = [client.get("/term/vehicle").text, client.get("/term/vehicle?q=pwned").text,
             client.get(f"/term/vehicle/sentence/{planted}/context").text,
             client.get(f"/term/vehicle/sentence/{planted}/explain").text]
    for html in pages:
        assert "<script>alert" not in html and "<b>Roe" not in html
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in pages[0]
    assert "&lt;b&gt;Roe&lt;/b&gt;" in pages[0]
    assert "&lt;script&gt;" in pages[2] and "&lt;script&gt;" in pages[3]
    assert len(sentence_ids(pages[1])) >= 1


# ------------------------------------------------------------------------------------------ re-rank


def _post_stream(app, path: str, query: str, cookie: str, chunks: int, headers=()) -> tuple[int, int]:
    """POST ``chunks`` chunks of 8 KiB to ``app`` straight through ASGI (no client buffering):
    the status and how many chunks the app pulled."""
    import asyncio

    pulled = 0
    status = []

    async def receive():
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b"x" * 8192, "more_body": pulled < chunks}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", b"testserver"), (b"cookie", cookie.encode()),
                         (b"content-type", b"application/x-www-form-urlencoded"), *headers],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    return status[0], pulled


def test_rerank_checks_the_token_before_reading_and_limits_bodies(vehicle, tmp_path):
    """A token-less POST to /rerank is refused before its body is read; a body over 64 KiB is
    refused while it arrives (413, after 9 chunks of 8 KiB, not all 1000), even without a
    Content-Length; a form-field token no longer counts."""
    app = create_app(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    client = TestClient(app, raise_server_exceptions=False)
    token, ids = start(client)
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    assert _post_stream(app, "/term/vehicle/rerank", "", cookie, 1000) == (403, 0)
    assert _post_stream(app, "/term/vehicle/rerank", f"csrf={token}", cookie, 1000) == (413, 9)
    big = [(b"content-length", str(10**9).encode())]
    assert _post_stream(app, "/term/vehicle/rerank", f"csrf={token}", cookie, 1000, big) == (413, 0)
    r = client.post("/term/vehicle/labels", content=b"{" + b" " * (70 * 1024) + b"}",
                    headers={"X-CSRF-Token": token, "content-type": "application/json"})
    assert r.status_code == 413
    assert client.post("/term/vehicle/rerank", data={"csrf": token}).status_code == 403


def test_deep_json_and_lone_surrogates_are_400(vehicle, tmp_path):
    store = LabelStore(tmp_path / "l.sqlite")
    client = client_for(ReviewSession(vehicle, store))
    token, ids = start(client)
    headers = {"X-CSRF-Token": token, "content-type": "application/json"}
    deep = b'{"sentence_ids": ' + b"[" * 30000 + b"]" * 30000 + b"}"
    r = client.post("/term/vehicle/labels", content=deep, headers=headers)
    assert r.status_code == 400 and "nested" in r.json()["error"]
    body = ('{"sentence_ids": ["' + ids[0] + '"], "label": "high value", "note": "a \\ud800 b"}').encode()
    r = client.post("/term/vehicle/labels", content=body, headers=headers)
    assert r.status_code == 400 and "surrogate" in r.json()["error"]
    r = client.post("/term/vehicle/note", content=('{"sentence_id": "' + ids[0] + '", "note": "\\udfff"}').encode(),
                    headers=headers)
    assert r.status_code == 400
    assert store.labels("vehicle") == {}


def test_server_faults_are_500_with_their_own_class(vehicle, tmp_path, monkeypatch):
    from statinterp.app.review.errors import BadRequest, HTTPError, NotFound, PayloadTooLarge, ServerFault
    from statinterp.errors import InputError

    assert [c.status for c in (BadRequest, NotFound, PayloadTooLarge, ServerFault)] == [400, 404, 413, 500]
    assert all(issubclass(c, HTTPError) for c in (BadRequest, NotFound, ServerFault))
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session)
    token, ids = start(client)

    def broken(*args, **kwargs):
        raise InputError(tmp_path / "l.sqlite", "cannot write the label store (disk full)")

    monkeypatch.setattr(session, "label", broken)
    r = client.post("/term/vehicle/labels", json={"sentence_ids": ids[:1], "label": "high value"},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 500 and "disk full" in r.json()["error"]
    r = client.post("/term/vehicle/labels", json={"sentence_ids": ids[:1], "label": "very high"},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 500  # still the broken store, not a 400


def test_rerank_without_labels_says_what_to_do(vehicle, tmp_path):
    client = client_for(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    token, _ = start(client)
    r = client.post("/term/vehicle/rerank", params={"csrf": token}, data={"method": "TF-ISF-p"})
    assert r.status_code == 400 and "label a few sentences first" in r.text


def test_rerank_route_orders_by_feedback_scores_and_marks_moves(vehicle, tmp_path, monkeypatch):
    """The route's own logic (which labels are passed, order, arrows), with a transparent
    stand-in for the feedback learner: the prior reversed, labels passed through."""
    import types

    seen = {}

    def reversed_prior(index, prior_scores, labels):
        seen.update(n=len(index), labels=dict(labels), prior=np.array(prior_scores))
        return -np.asarray(prior_scores)

    module = types.ModuleType("statinterp.learned.feedback")
    module.feedback_scores = reversed_prior
    monkeypatch.setitem(sys.modules, "statinterp.learned.feedback", module)
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"), continuous=False)  # the button alone
    client = client_for(session)
    token, ids = start(client)
    post_label(client, token, [ids[0]], "high value")
    post_label(client, token, [ids[1]], "no value")
    r = client.post("/term/vehicle/rerank", params={"csrf": token}, data={"method": "TF-ISF-p"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/term/vehicle?method=TF-ISF-p&order=feedback&unlabelled=1"
    assert seen["labels"] == {session.position(ids[0]): 3, session.position(ids[1]): 0}
    np.testing.assert_array_equal(seen["prior"], session.ranking("TF-ISF-p").scores)
    html = client.get(r.headers["location"]).text
    assert "Re-ranked the unlabelled sentences with your 2 labels" in html
    prior = session.ranking()
    prior_unlabelled = [x.sentence_id for x in prior.rows() if x.sentence_id not in ids[:2]]
    lowest = min(prior_unlabelled, key=lambda sid: (prior.scores[session.position(sid)], sid))
    assert sentence_ids(html)[0] == lowest  # the prior's lowest score is now first ...
    assert f"▲ {prior_unlabelled.index(lowest)}" in html  # ... and says how far it moved
    assert "▼" in client.get(r.headers["location"] + "&page=3").text
    assert "▲" not in client.get("/term/vehicle").text  # the method's own order has no arrows
    everything = r.headers["location"].replace("&unlabelled=1", "&page=3")  # labelled ones too: last here
    assert set(ids[:2]) <= set(sentence_ids(client.get(everything).text))


def test_rerank_uses_the_real_feedback_learner_when_present(vehicle, tmp_path):
    try:
        import statinterp.learned.feedback  # noqa: F401
    except ImportError:
        client = client_for(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
        token, ids = start(client)
        post_label(client, token, ids[:1], "high value")
        r = client.post("/term/vehicle/rerank", params={"csrf": token})
        assert r.status_code == 400 and "statinterp.learned.feedback" in r.text
        print("SKIP-NOTE: statinterp.learned.feedback is not merged yet; checked the message it gives instead")
        return
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session)
    token, ids = start(client)
    given = ["high value", "no value", "certain value", "no value", "potential value", "no value"]
    for sid, label in zip(ids[:6], given, strict=True):
        post_label(client, token, [sid], label)
    r = client.post("/term/vehicle/rerank", params={"csrf": token})
    assert r.status_code == 200 and "Re-ranked the unlabelled sentences with your 6 labels" in r.text


# ------------------------------------------------------------------------------------------ export / import


def test_export_round_trips_and_evaluate_reads_it(vehicle, tmp_path, capsys):
    labels = tmp_path / "l.sqlite"
    client = client_for(ReviewSession(vehicle, LabelStore(labels)))
    token, ids = start(client)
    given = dict(zip(ids[:4], ["high value", "certain value", "potential value", "no value"], strict=True))
    for sid, label in given.items():
        post_label(client, token, [sid], label)
    r = client.get("/term/vehicle/export.zip")
    assert r.status_code == 200 and r.headers["content-disposition"] == 'attachment; filename="vehicle.zip"'
    button = tmp_path / "button.zip"
    button.write_bytes(r.content)
    out = tmp_path / "vehicle.zip"
    assert main(["labels", "export", "vehicle", "--labels", str(labels), "--out", str(out)]) == 0
    assert "4 of 47 sentences of 'vehicle' labelled" in capsys.readouterr().err
    assert out.read_bytes() == button.read_bytes()
    original = vehicle.term
    back = load_corpus(out).term("vehicle")
    assert {s.id: s.label for s in back.sentences if s.label} == given
    assert [(s.id, s.text, s.paragraph_id) for s in back.sentences] == \
        [(s.id, s.text, s.paragraph_id) for s in original.sentences]
    assert {c.id: (c.text, c.short_name, c.citation, c.court, c.date) for c in back.cases.values()} == \
        {c.id: (c.text, c.short_name, c.citation, c.court, c.date) for c in original.cases.values()}
    assert {o.id: (o.text, o.type) for o in back.opinions.values()} == \
        {o.id: (o.text, o.type) for o in original.opinions.values()}
    assert main(["evaluate", "--data", str(out), "-m", "TF-ISF-p", "--format", "json", "-q"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "vehicle" in json.dumps(result)
    assert main(["labels", "export", "vehicle", "--labels", str(labels), "--out", str(out)]) == 2  # no --force
    assert "already exists" in capsys.readouterr().err

    fresh = tmp_path / "fresh.sqlite"
    assert main(["labels", "import", str(out), "--labels", str(fresh)]) == 0
    assert "imported 4 label(s)" in capsys.readouterr().err
    with LabelStore(fresh) as store:
        assert store.labels("vehicle") == given


def test_labels_commands_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert main(["labels", "export", "vehicle", "--labels", str(tmp_path / "none.sqlite"),
                 "--out", str(tmp_path / "x.zip")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no label store" in err and not (tmp_path / "x.zip").exists()
    bad = tmp_path / "bad"
    shutil.copytree(example_data_path(), bad)
    f = bad / "vehicle-sentence.json"
    data = json.loads(f.read_text())
    next(iter(data.values()))["label"] = "sort of useful"
    f.write_text(json.dumps(data))
    assert main(["labels", "import", str(bad), "--labels", str(tmp_path / "l.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown label 'sort of useful'" in err and "field 'label'" in err
    stray = tmp_path / "stray"
    shutil.copytree(example_data_path(), stray)
    f = stray / "vehicle-sentence.json"
    data = json.loads(f.read_text())
    rec = dict(next(iter(data.values())), label="high value")
    data["invented-s99"] = rec
    f.write_text(json.dumps(data))
    assert main(["labels", "import", str(stray), "--labels", str(tmp_path / "l.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'invented-s99'" in err
    with LabelStore(tmp_path / "l.sqlite") as store:
        assert store.labels("vehicle") == {}  # nothing half-imported


def test_review_bad_input_stops_before_the_server(tmp_path, capsys):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"x" * 4096)
    assert main(["review", "vehicle", "--no-browser", "--labels", str(junk), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "junk.sqlite" in err and "Open http" not in err
    assert main(["review", "no such term", "--no-browser", "--labels", str(tmp_path / "l.sqlite"), "-q"]) == 2
    assert "not in the loaded data" in capsys.readouterr().err
    assert main(["review", "vehicle", "--no-browser", "--data", str(tmp_path / "missing"), "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["review", "vehicle", "--no-browser", "-m", "Nonsense", "-q"]) == 2
    capsys.readouterr()


def test_session_filters_in_python(vehicle, tmp_path):
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"))
    first = session.page().items[0].sentence.id
    session.label([first], "high value")
    assert [i.sentence.id for i in session.page(Filters(label="high value")).items] == [first]
    assert first not in [i.sentence.id for i in session.page(Filters(unlabelled=True), per_page=100).items]
    assert session.page(Filters(search="zzzz-not-there")).matching == 0


# ------------------------------------------------------------------------------------------ a killed server


@pytest.mark.slow
def test_sigkill_after_a_label_loses_nothing(tmp_path, review_server):
    httpx = pytest.importorskip("httpx", reason="httpx not installed")
    labels = tmp_path / "labels.sqlite"
    proc, url = review_server("vehicle", "--labels", str(labels))
    with httpx.Client(follow_redirects=True, timeout=30) as http:
        page = http.get(url)
        assert page.status_code == 200
        token, ids = csrf_of(page.text), sentence_ids(page.text)
        base = url.rsplit("/term/", 1)[0]
        r = http.post(f"{base}/term/vehicle/labels", json={"sentence_ids": ids[:3], "label": "certain value"},
                      headers={"X-CSRF-Token": token})
        assert r.status_code == 200
        r = http.post(f"{base}/term/vehicle/note", json={"sentence_id": ids[0], "note": "keep me"},
                      headers={"X-CSRF-Token": token})
        assert r.status_code == 200
    proc.send_signal(signal.SIGKILL)  # no chance to flush or close anything
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with LabelStore(labels) as store:
        assert store.labels("vehicle") == {sid: "certain value" for sid in ids[:3]}
        assert store.records("vehicle")[ids[0]].note == "keep me"
    proc2, url2 = review_server("vehicle", "--labels", str(labels))  # reopening resumes
    html = httpx.get(url2, timeout=30).text
    assert "3</strong> of 47 sentences labelled" in html
    proc2.terminate()
    assert proc2.wait(timeout=30) in (0, 143)  # stopped cleanly, no process left behind


def test_the_shipped_model_is_the_default_and_other_methods_are_offered(vehicle, tmp_path):
    from statinterp.learned.model import default_ranker

    model = default_ranker()
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"), model=model)
    assert session.default_method == model.name == "learned:default"
    assert session.methods[0] == "learned:default" and "Tp-Nr" in session.methods
    client = client_for(session)
    html = client.get("/term/vehicle").text
    assert '<option value="learned:default" selected>' in html
    assert sentence_ids(html)[0] == session.ranking().rows(1)[0].sentence_id
    assert not session.trained_on_term() and "was trained on this term" not in html
    sid = sentence_ids(html)[0]
    panel = client.get(f"/term/vehicle/sentence/{sid}/explain").text
    assert "feature" in panel  # a model's contributions ...
    assert panel.index("Ranked here because") < panel.index("<details>") < panel.index("feature")  # ... one click away


def test_near_duplicates_collapse_and_can_be_labelled_together(example_with_copy, analysis_cache_dir, tmp_path):
    index = prepare_corpus(open_corpus(example_with_copy), cache_dir=analysis_cache_dir)["vehicle"]
    session = ReviewSession(index, LabelStore(tmp_path / "l.sqlite"))
    client = client_for(session)
    html = client.get("/term/vehicle?q=traffic+code%2C+moreover").text
    shown = sentence_ids(html)
    assert len(shown) == 1 and "+1 near-duplicate" in html
    other = ({"copy-of-traffic-code"} | {s.id for s in index.sentences if s.text.startswith("Our traffic code, m")}) \
        - set(shown)
    assert len(other) == 1
    (copy,) = other
    assert f'data-copies="[&#34;{copy}&#34;]"' in html  # what the page asks about before labelling copies
    assert "48 sentences" in client.get("/term/vehicle?all=1").text and "47 of 47" in client.get("/term/vehicle").text
    assert session.copies_of(shown[0]) == [copy]
    token = csrf_of(html)
    r = post_label(client, token, [shown[0], copy], "high value")  # what the page sends once the reviewer agrees
    assert r.status_code == 200 and r.json()["counts"]["high value"] == 2


@pytest.mark.slow
def test_host_needs_the_printed_token(tmp_path, review_server):
    httpx = pytest.importorskip("httpx", reason="httpx not installed")
    proc, url = review_server("vehicle", "--host", "127.0.0.1", "--labels", str(tmp_path / "l.sqlite"))
    assert "?token=" in url
    bare = url.split("?", 1)[0]
    assert httpx.get(bare, timeout=30).status_code == 403
    assert httpx.get(bare + "?token=guess", timeout=30).status_code == 403
    with httpx.Client(follow_redirects=True, timeout=30) as http:
        r = http.get(url)
        assert r.status_code == 200 and "sentences labelled" in r.text
        assert http.get(bare).status_code == 200  # the token now travels in a cookie


def test_a_taken_port_is_one_line_exit_2(tmp_path, capsys):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        code = main(["review", "vehicle", "--no-browser", "--port", str(port), "-m", "TF-ISF-p",
                     "--labels", str(tmp_path / "l.sqlite"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err
    assert "Open http" not in err


@pytest.mark.slow
def test_review_a_term_found_in_a_collection(tmp_path, review_server, capsys):
    httpx = pytest.importorskip("httpx", reason="httpx not installed")
    from statinterp.collection.ingest import ingest

    collection = tmp_path / "collection"
    ingest([example_data_path() / "sources" / "cap"], collection)
    proc, url = review_server("vehicle", "--collection", str(collection), "-m", "TF-ISF-p")
    with httpx.Client(follow_redirects=True, timeout=30) as http:
        page = http.get(url)
        assert page.status_code == 200 and "sentences labelled" in page.text
        token, ids = csrf_of(page.text), sentence_ids(page.text)
        base = url.rsplit("/term/", 1)[0]
        r = http.post(f"{base}/term/vehicle/labels", json={"sentence_ids": ids[:2], "label": "high value"},
                      headers={"X-CSRF-Token": token})
        assert r.status_code == 200
    proc.terminate()
    proc.wait(timeout=30)
    assert not (collection / "statinterp-labels.sqlite").exists()  # never written into the collection
    out = tmp_path / "found.zip"
    assert main(["labels", "export", "vehicle", "--collection", str(collection), "--out", str(out)]) == 0
    capsys.readouterr()
    term = load_corpus(out).term("vehicle")
    assert {s.id: s.label for s in term.sentences if s.label} == {sid: "high value" for sid in ids[:2]}
    assert main(["labels", "export", "vehicle", "--collection", str(collection), "--data", str(tmp_path),
                 "--out", str(tmp_path / "x.zip")]) == 2
    assert "not both" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ continuous mode


def test_continuous_mode_reranks_the_rest_below_the_last_label(vehicle, tmp_path):
    """Each label refits and re-ranks what is below the reviewer's last label; what is above stays;
    the answer carries the labels the order rests on, the estimate of what is left and the new
    places of the shown sentences; the page numbers its rows without gaps."""
    session = ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite"), method="TF-ISF-p")
    client = client_for(session)
    token, ids = start(client)
    html = client.get("/term/vehicle").text
    assert 'id="cont-labels">0</strong>' in html and "Left unread" in html
    first = list(session.continuous_state().order)
    estimates = []
    read = []
    for k, label in enumerate(["high value", "no value", "certain value", "no value"]):
        sid = vehicle.sentences[int(session.continuous_state().order[k])].id  # the next one, as the page shows it
        read.append(sid)
        r = client.post("/term/vehicle/labels", json={"sentence_ids": [sid], "label": label, "shown": ids},
                        headers={"X-CSRF-Token": token})
        assert r.status_code == 200
        cont = r.json()["continuous"]
        estimates.append(cont["remaining"]["expected"])
    assert cont["labels"] == 4 and cont["position"] == 4 and cont["remaining"]["unread"] == 43
    places = cont["places"]
    assert set(places) == set(ids) and len(set(places.values())) == len(ids)
    assert [places[sid] for sid in read if sid in places] == [i + 1 for i, sid in enumerate(read) if sid in places]
    state = session.continuous_state()
    assert [vehicle.sentences[int(c)].id for c in state.order[:4]] == read  # read: stays where it was read
    rest_before = [c for c in first if vehicle.sentences[int(c)].id not in read]
    assert list(state.order[4:]) != rest_before and sorted(state.order[4:]) == sorted(rest_before)  # re-ranked
    assert len(set(estimates)) > 1  # the estimate moves with the labels
    html = client.get("/term/vehicle").text
    assert 'id="cont-labels">4</strong>' in html
    assert sentence_ids(html)[:4] == read and sentence_ids(html)[4:] != ids[4:len(sentence_ids(html))]
    ranks = [int(x) for x in re.findall(r'class="rank">(\d+)<', html)]
    assert ranks == list(range(1, len(ranks) + 1))
    # the explicit button stays
    r = client.post("/term/vehicle/rerank", params={"csrf": token}, data={"method": "TF-ISF-p"})
    assert r.status_code == 200 and "Re-ranked the unlabelled sentences with your 4 labels" in r.text


# ------------------------------------------------------------------------------------------ the app's shape


def test_every_route_of_the_table_is_served_and_its_urls_reach_it(vehicle, tmp_path):
    """The route table (urls.ROUTES) is the app's, and Urls builds paths the app routes back to
    the same view, also for a sentence id holding '/', '?', '#' and spaces."""
    from statinterp.app.review.views import ROUTES, Urls, Views

    app = create_app(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    served = {(r.path, tuple(sorted(r.methods or ()))) for r in app.routes if hasattr(r, "methods")}
    for name, path, methods in ROUTES:
        assert callable(getattr(Views, name)), name
        assert (path, tuple(sorted({*methods, *(("HEAD",) if "GET" in methods else ())}))) in served, path
    urls = Urls("a b/c")
    odd = "s 1/2?x#y"
    assert urls.context(odd) == "/term/a%20b%2Fc/sentence/s%201%2F2%3Fx%23y/context"
    assert urls.term(method="TF-ISF-p", page="", order=None) == "/term/a%20b%2Fc?method=TF-ISF-p"
    assert urls.rerank("tok") == "/term/a%20b%2Fc/rerank?csrf=tok"
    assert urls.for_script()["explain"] == "/term/a%20b%2Fc/sentence/{sid}/explain"
    from urllib.parse import unquote

    from starlette.routing import Match

    urls = Urls("vehicle")  # term keys hold no '/' (statinterp.corpus.dataset.term_key)
    for built, name in ((urls.context(odd), "context"), (urls.explain(odd, "TF-ISF-p"), "explain"),
                        (urls.export(), "export"), (urls.term(page=2), "term"), (urls.labels(), "labels")):
        scope = {"type": "http", "path": unquote(built.split("?")[0]), "method": "POST" if name == "labels" else "GET"}
        route = next(r for r in app.routes if r.matches(scope)[0] == Match.FULL)
        params = route.matches(scope)[1]["path_params"]
        assert route.endpoint.__name__ == name and params["key"] == "vehicle"
        if "sid" in params:
            assert params["sid"] == odd


def test_no_path_is_written_out_in_the_templates_or_the_script():
    """URLs come from the route table in views.py only (handed to the templates as ``urls`` and to the script in
    ``<body data-urls>``)."""
    import re
    from pathlib import Path

    import statinterp.app.review as review

    root = Path(review.__file__).parent
    files = [*(root / "templates").glob("*.html"), root / "static" / "review.js"]
    for f in files:
        text = f.read_text(encoding="utf-8")
        written = re.findall(r"""(?:href|action|src)="/[^"]*"|["']/(?:term|static|labels|note)\b""", text)
        assert written == [], (f.name, written)


def test_the_page_hands_the_script_its_urls(vehicle, tmp_path):
    import html as html_lib

    client = client_for(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    page = client.get("/term/vehicle")
    raw = re.search(r'<body data-urls="([^"]*)"', page.text).group(1)
    urls = json.loads(html_lib.unescape(raw))
    assert urls == {"labels": "/term/vehicle/labels", "note": "/term/vehicle/note",
                    "context": "/term/vehicle/sentence/{sid}/context",
                    "explain": "/term/vehicle/sentence/{sid}/explain"}
    assert 'action="/term/vehicle/rerank?csrf=' in page.text and 'href="/static/review.css"' in page.text


def test_a_statinterp_error_is_a_400_when_the_request_asked_wrong_and_a_500_otherwise():
    from statinterp.app.review.errors import BadRequest, NotFound, ServerFault, http_error
    from statinterp.errors import InputError

    assert isinstance(http_error(UsageError("unknown label 'x'")), BadRequest)
    fault = http_error(InputError("labels.sqlite", "disk full"))
    assert isinstance(fault, ServerFault) and fault.status == 500 and "disk full" in fault.message
    missing = NotFound("no term")
    assert http_error(missing) is missing


def test_every_post_route_of_the_table_checks_the_csrf_token_before_its_view(vehicle, tmp_path):
    """The CSRF check is the app's route middleware on every POST route of urls.ROUTES (none can
    be added without it): a token-less POST is a 403 before its body is read, even to another
    term's path; a GET route still answers a POST with 405 and an unknown path with 404."""
    from statinterp.app.review.views import ROUTES, Urls

    app = create_app(ReviewSession(vehicle, LabelStore(tmp_path / "l.sqlite")))
    client = TestClient(app, raise_server_exceptions=False)
    token, _ = start(client)
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    posts = [name for name, _, methods in ROUTES if "POST" in methods]
    assert posts == ["labels", "note", "rerank"]
    for name in posts:
        for key in ("vehicle", "other"):
            path = Urls(key).path(name)
            assert _post_stream(app, path, "", cookie, 5) == (403, 0), path
            assert _post_stream(app, path, "csrf=%C3%A9", cookie, 5) == (403, 0), path
        other = Urls("other").path(name)  # with the token: the view's term check, still before the body
        assert _post_stream(app, other, f"csrf={token}", cookie, 1) == (404, 0), name
    assert client.post("/term/vehicle", headers={"X-CSRF-Token": token}).status_code == 405
    assert client.post("/term/vehicle").status_code == 405
    assert client.post("/no/such/page").status_code == 404
