"""The review web app (Starlette + Jinja2, server-rendered) and the server that runs it.

Routes (``KEY`` is the term key, ``SID`` a sentence id; nothing from a request reaches a path):

* ``GET /`` -> the term page; ``GET /term/KEY`` the term and its ranking (query: ``method``,
  ``order=feedback``, ``unlabelled``, ``label``, ``court``, ``year``, ``q``, ``page``, ``all``);
* ``GET /term/KEY/sentence/SID/context`` and ``.../explain`` -> HTML fragments;
* ``POST /term/KEY/labels`` (JSON ``{"sentence_ids": [...], "label": ..., "note": ...}``),
  ``POST /term/KEY/note``, ``POST /term/KEY/rerank`` -> state changes, CSRF-checked;
* ``GET /term/KEY/export.zip`` -> the term zip with the reviewer's labels.

Security: every state-changing request is a POST carrying the session's CSRF token (header
``X-CSRF-Token`` or form field ``csrf``; the token is an HMAC of the session cookie, which is
``HttpOnly`` and ``SameSite=Strict``). With ``access_token`` (``--host``) every request needs it
(``?token=`` once, then a cookie). ``allowed_hosts`` rejects other ``Host`` headers (DNS
rebinding). Jinja2 autoescaping is on for every template.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from statinterp.app.review.errors import BadRequest, Forbidden, HTTPError, NotFound, PayloadTooLarge
from statinterp.app.review.markup import highlight_term
from statinterp.app.review.session import LABEL_KEYS, Filters, ReviewSession
from statinterp.corpus.dataset import term_key
from statinterp.errors import StatinterpError, UsageError

__all__ = ["bind_socket", "create_app", "serve"]

SESSION_COOKIE = "statinterp_session"
ACCESS_COOKIE = "statinterp_access"
MAX_BODY = 64 * 1024


def _package_dir(name: str) -> Path:
    return Path(str(resources.files("statinterp.app.review").joinpath(name)))


def create_app(session: ReviewSession, *, access_token: str | None = None,
               allowed_hosts: list[str] | None = None, secret: bytes | None = None):
    """The Starlette application reviewing ``session``'s term."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import (
        HTMLResponse,
        JSONResponse,
        RedirectResponse,
        Response,
    )
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    secret = secret or secrets.token_bytes(32)
    env = Environment(loader=FileSystemLoader(str(_package_dir("templates"))),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["term"] = lambda text: highlight_term(text, session.term.query)
    env.globals["label_keys"] = LABEL_KEYS
    env.filters["utc"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))

    def csrf_token(session_id: str) -> str:
        return hmac.new(secret, session_id.encode(), hashlib.sha256).hexdigest()

    def session_id(request: Request) -> tuple[str, bool]:
        sid = request.cookies.get(SESSION_COOKIE, "")
        if len(sid) == 43 and sid.replace("-", "").replace("_", "").isalnum():
            return sid, False
        return secrets.token_urlsafe(32), True

    def render(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        sid, new = session_id(request)
        ctx.setdefault("term", session.term)
        html = env.get_template(name).render(request=request, csrf=csrf_token(sid), session=session, **ctx)
        response = HTMLResponse(html, status_code=status)
        if new:
            response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict")
        response.headers["Content-Security-Policy"] = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                                       "img-src 'self' data:; frame-ancestors 'none'; "
                                                       "form-action 'self'; base-uri 'none'")
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    def error_page(request: Request, status: int, message: str) -> Response:
        if request.headers.get("accept", "").startswith("application/json") or request.method == "POST" and \
                request.headers.get("content-type", "").startswith("application/json"):
            return JSONResponse({"ok": False, "error": message}, status_code=status)
        return render(request, "error.html", status=status, status_code=status, message=message)

    def check_term(request: Request) -> None:
        if request.path_params["key"] != session.key:
            raise NotFound(f"no term {request.path_params['key']!r} in this review (reviewing {session.key!r})")

    def check_csrf(request: Request) -> None:
        """The token from the ``X-CSRF-Token`` header or the ``csrf`` query parameter -- checked
        before any body is read, so a request without it costs nothing."""
        cookie = request.cookies.get(SESSION_COOKIE)
        given = request.headers.get("x-csrf-token") or request.query_params.get("csrf") or ""
        if not cookie or not hmac.compare_digest(given, csrf_token(cookie)):
            raise Forbidden("missing or wrong CSRF token: reload the page and try again")

    async def read_body(request: Request) -> bytes:
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

    async def read_json(request: Request) -> dict:
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

    async def read_form(request: Request) -> dict[str, str]:
        from urllib.parse import parse_qsl

        try:
            text = (await read_body(request)).decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("the form is not UTF-8") from None
        return dict(parse_qsl(text, max_num_fields=20))

    def optional_text(data: dict, name: str) -> str | None:
        """A string field of a JSON body, or None when absent."""
        return None if data.get(name) is None else text_field(data, name)

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

    def continuous_json(state, shown: list[str]) -> dict[str, Any]:
        """What the page shows of the continuous order: labels it rests on, the estimate of what
        is left, and the new place (1-based, in the whole order) of each sentence id in ``shown``."""
        place = {c: r for r, (c, _) in enumerate(session.groups(state.method), start=1)}  # the page's numbers
        return {"labels": state.n_labels, "position": state.position, "remaining": state.remaining.to_dict(),
                "seconds": round(state.seconds, 4),
                "places": {sid: place[session.by_id[sid]] for sid in shown if session.by_id.get(sid) in place}}

    def filters_from(request: Request) -> tuple[Filters, int]:
        q = request.query_params
        try:
            number = int(q.get("page", "1"))
        except ValueError:
            raise BadRequest(f"page must be a number, not {q.get('page')!r}") from None
        return Filters(unlabelled=q.get("unlabelled") == "1", label=q.get("label", ""), court=q.get("court", ""),
                       year=q.get("year", ""), search=q.get("q", "")[:200], collapse=q.get("all") != "1"), number

    # ------------------------------------------------------------------------------ pages

    async def home(request: Request):
        return RedirectResponse(f"/term/{session.key}", status_code=303)

    def term_page(request: Request):
        if request.path_params["key"] != session.key and term_key(request.path_params["key"]) == session.key:
            query = f"?{request.url.query}" if request.url.query else ""  # "technological measure" -> its key
            return RedirectResponse(f"/term/{session.key}{query}", status_code=303)
        check_term(request)
        filters, number = filters_from(request)
        method = request.query_params.get("method") or session.default_method
        reranked = request.query_params.get("order") == "feedback"
        page = session.page(filters, number, method, reranked)
        provision = session.term.provision

        def link(**changes: Any) -> str:
            params = {k: v for k, v in request.query_params.items()}
            params.update({k: v for k, v in changes.items()})
            params = {k: v for k, v in params.items() if v not in ("", None)}
            return f"/term/{session.key}" + ("?" + urlencode(params) if params else "")

        return render(request, "term.html", page=page, provision=provision, link=link, method=page.method,
                      reranked=page.reranked, show_data_labels=session.show_data_labels)

    def context(request: Request):
        check_term(request)
        return render(request, "context.html", **session.context(request.path_params["sid"]))

    def explain(request: Request):
        check_term(request)
        sid = request.path_params["sid"]
        reasons, text = session.explain(sid, request.query_params.get("method") or None)
        return render(request, "explain.html", reasons=reasons, explanation=text)

    async def labels(request: Request):
        check_term(request)
        check_csrf(request)
        data = await read_json(request)
        ids = data.get("sentence_ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(x, str) for x in ids) or len(ids) > 1000:
            raise BadRequest("sentence_ids must be a non-empty list of sentence ids")
        label = optional_text(data, "label")
        note = optional_text(data, "note")
        method = optional_text(data, "method")
        shown = data.get("shown") or []
        if not isinstance(shown, list) or not all(isinstance(x, str) for x in shown) or len(shown) > 1000:
            raise BadRequest("shown must be a list of sentence ids")
        before = session.records()
        at = session.label(ids, label, note=note, source="browser")
        records = session.records()
        previous = {sid: before[sid].label if sid in before else None for sid in ids}
        answer: dict[str, Any] = {"ok": True, "at": at, "counts": session.counts(records), "previous": previous,
                                  "labels": {sid: records[sid].label for sid in ids}}
        if session.continuous:
            from starlette.concurrency import run_in_threadpool

            state = await run_in_threadpool(session.update_continuous, method or None)  # off the event loop
            answer["continuous"] = continuous_json(state, shown)
        return JSONResponse(answer)

    async def note(request: Request):
        check_term(request)
        check_csrf(request)
        data = await read_json(request)
        sid, text = text_field(data, "sentence_id"), text_field(data, "note")
        at = session.set_note(sid, text, source="browser")
        return JSONResponse({"ok": True, "at": at})

    async def rerank(request: Request):
        check_term(request)
        check_csrf(request)  # before the body is read
        form = await read_form(request)
        method = form.get("method", "") or session.default_method
        session.rerank(method)
        query = {"method": method, "order": "feedback", "unlabelled": "1"}  # what to read next
        return RedirectResponse(f"/term/{session.key}?" + urlencode(query), status_code=303)

    def export(request: Request):
        check_term(request)
        filename = re.sub(r"[^A-Za-z0-9_.-]", "_", session.key) + ".zip"
        return Response(session.export_bytes(), media_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    # ------------------------------------------------------------------------------ errors

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        messages = {404: "no such page", 405: "method not allowed"}
        return error_page(request, exc.status_code, exc.detail if exc.detail and exc.status_code not in messages
                          else messages.get(exc.status_code, str(exc.detail)))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPError)
        if exc.status >= 500:
            print(f"statinterp review: error: {exc.message}", file=sys.stderr)
        return error_page(request, exc.status, exc.message)

    async def on_usage(request: Request, exc: Exception) -> Response:
        """The session refused what the request asked (an unknown label, a note too long): 400;
        any other statinterp error (a label store that cannot be written) is the server's: 500."""
        if isinstance(exc, UsageError):
            return error_page(request, 400, str(exc))
        print(f"statinterp review: error: {exc}", file=sys.stderr)
        return error_page(request, 500, str(exc))

    class CatchAll:
        """A bug in a request: one line in the server log and a 500 page, not a traceback."""

        def __init__(self, app: Callable):
            self.app = app

        async def __call__(self, scope, receive, send):
            started = False

            async def tracking_send(message):
                nonlocal started
                started = started or message["type"] == "http.response.start"
                await send(message)

            try:
                await self.app(scope, receive, tracking_send)
            except Exception as exc:  # noqa: BLE001 - reported as one line
                print(f"statinterp review: error: internal error ({type(exc).__name__}: {exc}); this is a bug",
                      file=sys.stderr)
                if started or scope["type"] != "http":
                    return
                response = error_page(Request(scope), 500,
                                      f"internal error ({type(exc).__name__}); the server log has one line about it")
                await response(scope, receive, send)

    # ------------------------------------------------------------------------------ access token

    class AccessToken:
        def __init__(self, app: Callable):
            self.app = app

        async def __call__(self, scope, receive, send):
            if scope["type"] != "http" or access_token is None:
                return await self.app(scope, receive, send)
            request = Request(scope)
            if hmac.compare_digest(request.cookies.get(ACCESS_COOKIE, ""), access_token):
                return await self.app(scope, receive, send)
            if hmac.compare_digest(request.query_params.get("token", ""), access_token):
                params = {k: v for k, v in request.query_params.items() if k != "token"}
                response: Response = RedirectResponse(request.url.path + ("?" + urlencode(params) if params else ""),
                                                      status_code=303)
                response.set_cookie(ACCESS_COOKIE, access_token, httponly=True, samesite="strict")
            else:
                response = HTMLResponse("<!doctype html><title>Access token required</title><p>This review needs "
                                        "its access token: open the URL that <code>statinterp review</code> "
                                        "printed.</p>", status_code=403)
            await response(scope, receive, send)

    middleware = [Middleware(CatchAll), Middleware(AccessToken)]
    if allowed_hosts:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    routes = [
        Route("/", home),
        Route("/term/{key}", term_page),
        Route("/term/{key}/sentence/{sid:path}/context", context),
        Route("/term/{key}/sentence/{sid:path}/explain", explain),
        Route("/term/{key}/labels", labels, methods=["POST"]),
        Route("/term/{key}/note", note, methods=["POST"]),
        Route("/term/{key}/rerank", rerank, methods=["POST"]),
        Route("/term/{key}/export.zip", export),
        Mount("/static", StaticFiles(directory=str(_package_dir("static"))), name="static"),
    ]
    return Starlette(routes=routes, middleware=middleware, exception_handlers={
        HTTPException: on_http, HTTPError: on_http_error, StatinterpError: on_usage})


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port); UsageError if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); another review may be running: "
                         "give --port N (or --port 0 for any free port)") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(app, sock: socket.socket, url: str, open_browser: bool = True) -> None:
    """Run ``app`` on the bound socket until Ctrl-C/SIGTERM; open ``url`` in the browser once it listens."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    if open_browser:
        def when_started() -> None:
            for _ in range(200):
                if server.started:
                    webbrowser.open(url)
                    return
                threading.Event().wait(0.05)

        threading.Thread(target=when_started, daemon=True).start()
    server.run(sockets=[sock])
