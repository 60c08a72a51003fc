"""The review app's routes and views: what a request meets between the server
(:mod:`statinterp.app.review.server`) and the session; its HTTP errors are
:mod:`statinterp.app.review.errors`, its HTML of case-law text :mod:`statinterp.app.review.markup`.

**Views**: the review app's views: one method per route of :data:`statinterp.app.review.views.ROUTES`
(same name); the app (:class:`statinterp.app.review.server.ReviewApp`) wires them to the routes,
the templates, the CSRF check and the error handling.

A view raises an :mod:`statinterp.app.review.views` class for a request it refuses; request
bodies are read through :func:`read_body` (limited while they arrive). A POST view runs after
the app's CSRF check, so a body is never read for a request without the token.

**Routes**: the review app's routes and URLs, in one place.

:data:`ROUTES` is the route table (name, path pattern, HTTP methods): the app is built from it
(:class:`statinterp.app.review.server.ReviewApp`) and :class:`Urls` builds every URL from the same
patterns, for the views, the templates (``urls`` in every template) and the script (the
``data-urls`` attribute of ``<body>``: :meth:`Urls.for_script`). Nothing else writes a path.

``KEY`` is the term key, ``SID`` a sentence id; both are percent-encoded when put in a URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from statinterp.app.review.errors import (
    BadRequest,
    NotFound,
    PayloadTooLarge,
)
from statinterp.app.review.session import Filters, ReviewSession
from statinterp.corpus.dataset import term_key

__all__ = ["ROUTES", "STATIC_PREFIX", "Urls", "MAX_BODY", "Views", "read_body", "read_form", "read_json",
           "text_field"]























#: name, path pattern (Starlette syntax), methods.
ROUTES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("home", "/", ("GET",)),
    ("term", "/term/{key}", ("GET",)),
    ("context", "/term/{key}/sentence/{sid:path}/context", ("GET",)),
    ("explain", "/term/{key}/sentence/{sid:path}/explain", ("GET",)),
    ("labels", "/term/{key}/labels", ("POST",)),
    ("note", "/term/{key}/note", ("POST",)),
    ("rerank", "/term/{key}/rerank", ("POST",)),
    ("export", "/term/{key}/export.zip", ("GET",)),
    ("memo", "/term/{key}/memo.docx", ("GET",)),
)

#: Where the page's CSS and script are served.
STATIC_PREFIX = "/static"

_PATTERNS = {name: path for name, path, _ in ROUTES}

_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


class Urls:
    """The URLs of one review (its term ``key``)."""

    def __init__(self, key: str):
        self.key = key

    def path(self, name: str, query: dict[str, Any] | None = None, **params: str) -> str:
        """The route ``name`` with its parameters filled in (``key`` is this review's); ``query``
        items whose value is empty or None are left out."""
        values = {"key": self.key, **params}
        path = _PARAM.sub(lambda m: quote(str(values[m.group(1)]), safe=""), _PATTERNS[name])
        kept = {k: v for k, v in (query or {}).items() if v not in ("", None)}
        return path + ("?" + urlencode(kept) if kept else "")

    def home(self) -> str:
        return self.path("home")

    def term(self, **query: Any) -> str:
        return self.path("term", query)

    def context(self, sid: str) -> str:
        return self.path("context", sid=sid)

    def explain(self, sid: str, method: str | None = None) -> str:
        return self.path("explain", {"method": method}, sid=sid)

    def labels(self) -> str:
        return self.path("labels")

    def note(self) -> str:
        return self.path("note")

    def rerank(self, csrf: str) -> str:
        """The re-rank form's action: the CSRF token in the query, checked before the body is read."""
        return self.path("rerank", {"csrf": csrf})

    def export(self) -> str:
        return self.path("export")

    def memo(self, method: str | None = None) -> str:
        return self.path("memo", {"method": method})

    def static(self, filename: str) -> str:
        return f"{STATIC_PREFIX}/{quote(filename)}"

    def for_script(self) -> dict[str, str]:
        """What review.js needs: the POST targets, and the sentence fragments with ``{sid}`` to fill
        in (percent-encoded by the script)."""
        marker = "SID-PLACEHOLDER"
        return {"labels": self.labels(), "note": self.note(),
                "context": self.context(marker).replace(marker, "{sid}"),
                "explain": self.explain(marker).replace(marker, "{sid}")}

#: The largest request body read (a longer one is refused while it arrives: 413).
MAX_BODY = 64 * 1024


async def read_body(request) -> bytes:
    """The body, read up to :data:`MAX_BODY` bytes (a longer one is refused while it arrives)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise PayloadTooLarge(f"request body over {MAX_BODY} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise PayloadTooLarge(f"request body over {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request) -> dict:
    """The body as a JSON object (400 when it is not one, or nested too deeply)."""
    body = await read_body(request)
    try:
        data = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the request body is not valid JSON") from None
    except RecursionError:
        raise BadRequest("the request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


async def read_form(request) -> dict[str, str]:
    """A URL-encoded form body (at most 20 fields)."""
    from urllib.parse import parse_qsl

    try:
        text = (await read_body(request)).decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("the form is not UTF-8") from None
    return dict(parse_qsl(text, max_num_fields=20))


def text_field(data: dict, name: str) -> str:
    """A string field of a JSON body that can be stored (UTF-8: no lone surrogates)."""
    value = data.get(name)
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"{name} is not valid text (a lone surrogate)") from None
    return value


def optional_text(data: dict, name: str) -> str | None:
    """A string field of a JSON body, or None when absent."""
    return None if data.get(name) is None else text_field(data, name)


def _id_list(data: dict, name: str, *, required: bool) -> list[str]:
    ids = data.get(name) or []
    if not isinstance(ids, list) or (required and not ids) or not all(isinstance(x, str) for x in ids) \
            or len(ids) > 1000:
        raise BadRequest(f"{name} must be a {'non-empty ' if required else ''}list of sentence ids")
    return ids


def filters_from(request) -> tuple[Filters, int]:
    """The ranking page's filters and page number from the query."""
    q = request.query_params
    try:
        number = int(q.get("page", "1"))
    except ValueError:
        raise BadRequest(f"page must be a number, not {q.get('page')!r}") from None
    return Filters(unlabelled=q.get("unlabelled") == "1", label=q.get("label", ""), court=q.get("court", ""),
                   year=q.get("year", ""), search=q.get("q", "")[:200], collapse=q.get("all") != "1"), number


class Views:
    """The views of one review. ``render(request, template, status=200, **context)`` renders a page."""

    def __init__(self, session: ReviewSession, urls: Urls, render: Callable[..., Any]):
        self.session, self.urls, self.render = session, urls, render

    def _check_term(self, request) -> None:
        if request.path_params["key"] != self.session.key:
            raise NotFound(f"no term {request.path_params['key']!r} in this review (reviewing {self.session.key!r})")

    # ------------------------------------------------------------------------------ pages

    async def home(self, request):
        from starlette.responses import RedirectResponse

        return RedirectResponse(self.urls.term(), status_code=303)

    def term(self, request):
        from starlette.responses import RedirectResponse

        session = self.session
        if request.path_params["key"] != session.key and term_key(request.path_params["key"]) == session.key:
            return RedirectResponse(self.urls.term(**request.query_params), status_code=303)  # "a b" -> its key
        self._check_term(request)
        filters, number = filters_from(request)
        method = request.query_params.get("method") or session.default_method
        reranked = request.query_params.get("order") == "feedback"
        page = session.page(filters, number, method, reranked)

        def link(**changes: Any) -> str:
            return self.urls.term(**{**request.query_params, **changes})

        return self.render(request, "term.html", page=page, provision=session.term.provision, link=link,
                           method=page.method, reranked=page.reranked, show_data_labels=session.show_data_labels)

    def context(self, request):
        self._check_term(request)
        return self.render(request, "context.html", **self.session.context(request.path_params["sid"]))

    def explain(self, request):
        self._check_term(request)
        reasons, text = self.session.explain(request.path_params["sid"], request.query_params.get("method") or None)
        return self.render(request, "explain.html", reasons=reasons, explanation=text)

    def export(self, request):
        from starlette.responses import Response

        self._check_term(request)
        filename = re.sub(r"[^A-Za-z0-9_.-]", "_", self.session.key) + ".zip"
        return Response(self.session.export_bytes(), media_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    def memo(self, request):
        from starlette.responses import Response

        self._check_term(request)  # a plain (not async) view: Starlette runs it in a thread
        filename = re.sub(r"[^A-Za-z0-9_.-]", "_", self.session.key) + "-memo.docx"
        body = self.session.memo_bytes(request.query_params.get("method") or None)
        return Response(body, media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    # ------------------------------------------------------------------------------ state changes (POST)

    async def labels(self, request):
        from starlette.concurrency import run_in_threadpool
        from starlette.responses import JSONResponse

        session = self.session
        self._check_term(request)
        data = await read_json(request)
        ids = _id_list(data, "sentence_ids", required=True)
        label, note, method = optional_text(data, "label"), optional_text(data, "note"), optional_text(data, "method")
        shown = _id_list(data, "shown", required=False)
        before = session.records()
        at = session.label(ids, label, note=note, source="browser")
        records = session.records()
        previous = {sid: before[sid].label if sid in before else None for sid in ids}
        answer: dict[str, Any] = {"ok": True, "at": at, "counts": session.counts(records), "previous": previous,
                                  "labels": {sid: records[sid].label for sid in ids}}
        if session.continuous:
            state = await run_in_threadpool(session.update_continuous, method or None)  # off the event loop
            answer["continuous"] = self._continuous_json(state, shown)
        return JSONResponse(answer)

    async def note(self, request):
        from starlette.responses import JSONResponse

        self._check_term(request)
        data = await read_json(request)
        sid, text = text_field(data, "sentence_id"), text_field(data, "note")
        at = self.session.set_note(sid, text, source="browser")
        return JSONResponse({"ok": True, "at": at})

    async def rerank(self, request):
        from starlette.responses import RedirectResponse

        self._check_term(request)
        form = await read_form(request)
        method = form.get("method", "") or self.session.default_method
        self.session.rerank(method)
        # what to read next: the unlabelled sentences in the new order
        return RedirectResponse(self.urls.term(method=method, order="feedback", unlabelled="1"), status_code=303)

    def _continuous_json(self, state, shown: list[str]) -> dict[str, Any]:
        """What the page shows of the continuous order: labels it rests on, the estimate of what
        is left, and the new place (1-based, in the whole order) of each sentence id in ``shown``."""
        session = self.session
        place = {c: r for r, (c, _) in enumerate(session.groups(state.method), start=1)}  # the page's numbers
        return {"labels": state.n_labels, "position": state.position, "remaining": state.remaining.to_dict(),
                "seconds": round(state.seconds, 4),
                "places": {sid: place[session.by_id[sid]] for sid in shown if session.by_id.get(sid) in place}}
