"""The review web app (Starlette + Jinja2, server-rendered) and the server that runs it.

:class:`ReviewApp` is the app: a Starlette application holding one review's session, its
templates and its settings. Its routes are the route table
(:data:`statinterp.app.review.views.ROUTES`, from which :class:`~statinterp.app.review.views.Urls`
builds every URL the views, templates and script use), each mapped to the
:class:`statinterp.app.review.views.Views` method of the same name; the HTTP errors are the
classes of :mod:`statinterp.app.review.views`. Everything a request passes through besides its
view is declared in :meth:`ReviewApp.__init__`: the middleware (:class:`CatchAll`,
:class:`AccessToken`, Starlette's ``TrustedHostMiddleware``, and :class:`CsrfCheck` on every POST
route) and the exception handlers that answer errors with an error page or JSON.

Security: every state-changing request is a POST carrying the session's CSRF token (header
``X-CSRF-Token`` or query parameter ``csrf``; the token is an HMAC of the session cookie, which
is ``HttpOnly`` and ``SameSite=Strict``), checked before the body is read. With
``access_token`` (``--host``) every request needs it (``?token=`` once, then a cookie).
``allowed_hosts`` rejects other ``Host`` headers (DNS rebinding). Tokens are compared as UTF-8
bytes in constant time (a token that is not ASCII is simply wrong: 403). The redirect that drops
``?token=`` stays on the same host. Jinja2 autoescaping is on for every template. Connection
limits (request timeout, a cap on open connections, accept() errors logged once):
:mod:`statinterp.app.review.server`.

**Connection limits**: connection limits of the review server: what uvicorn leaves open.

uvicorn (h11) starts no timer when a connection is accepted and cancels its keep-alive timer
at the first byte received, so a client that connects and sends nothing, or sends a request
head a byte at a time, holds a connection (an open file) forever; with the usual limit of
1,024 open files, about a thousand such clients stop ``accept()``, and asyncio logs every
failed attempt. Here:

- **request timeout**: a connection must deliver a whole request (head and body) within
  :data:`REQUEST_TIMEOUT` seconds of being opened or of its previous response, else it is
  closed (bytes arriving slowly do not extend it); between requests uvicorn's keep-alive
  timeout (:data:`KEEP_ALIVE`) applies as well;
- **a cap on open connections** (:func:`connection_cap`, well below the open-file limit, which
  :func:`raise_open_file_limit` first raises to the hard limit, up to 4,096): a connection
  over the cap closes the oldest connection that has no request in progress (or, if every
  one is busy, itself), so idle clients can never lock out a new one;
- **accept() failures** (too many open files all the same) are logged as one line at most
  once a minute, instead of once per retry with a traceback (:func:`accept_error_handler`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
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
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from statinterp.app.review.errors import Forbidden, HTTPError, http_error
from statinterp.app.review.markup import highlight_term
from statinterp.app.review.session import LABEL_KEYS, ReviewSession
from statinterp.app.review.views import ROUTES, STATIC_PREFIX, Urls, Views
from statinterp.errors import StatinterpError, UsageError

__all__ = ["REQUEST_TIMEOUT", "KEEP_ALIVE", "MAX_CONNECTIONS", "ConnectionGuard", "accept_error_handler",
           "connection_cap", "protocol_class", "raise_open_file_limit", "AccessToken", "CatchAll",
           "CsrfCheck", "CsrfTokens", "ReviewApp", "bind_socket", "create_app", "local_location",
           "make_server", "same_token", "serve"]

#: Seconds a connection has to deliver a whole request once it is open or idle.
REQUEST_TIMEOUT = 10.0

#: Seconds uvicorn keeps an idle keep-alive connection.
KEEP_ALIVE = 5

#: The most connections kept open, whatever the open-file limit.
MAX_CONNECTIONS = 2048

#: Open files kept free for everything else (label store, templates, static files, logs).
RESERVED_FILES = 64

#: Connections the listening socket queues, and asyncio accepts in one go (before any is counted
#: here): the cap leaves room for two such bursts.
BACKLOG = 128

#: Seconds between two reports of failing accept() calls.
REPORT_EVERY = 60.0


def raise_open_file_limit(target: int = 4096) -> int:
    """Raise this process's soft limit on open files towards ``target`` (never above the hard
    limit, never lower); the soft limit in force afterwards."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return MAX_CONNECTIONS + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else target


def connection_cap(open_file_limit: int) -> int:
    """How many connections to keep open under ``open_file_limit``."""
    return max(8, min(MAX_CONNECTIONS, open_file_limit - RESERVED_FILES - 2 * BACKLOG))


class ConnectionGuard:
    """The server's open connections, oldest first, and the limits they are held to."""

    def __init__(self, cap: int, request_timeout: float = REQUEST_TIMEOUT):
        self.cap = cap
        self.request_timeout = request_timeout
        self.open: dict[Any, float] = {}  # protocol -> time opened (insertion order: oldest first)
        self.reported_at: float | None = None  # when failing accept() calls were last reported

    def admit(self, protocol: Any) -> bool:
        """Register a new connection; over the cap, close the oldest idle one (False: none is
        idle, so the new one must go)."""
        if len(self.open) >= self.cap:
            victim = next((p for p in self.open if p.idle()), None)
            if victim is None:
                return False
            self.open.pop(victim, None)
            victim.drop()
        self.open[protocol] = time.monotonic()
        return True

    def forget(self, protocol: Any) -> None:
        self.open.pop(protocol, None)


def protocol_class(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with ``guard``'s request timeout and connection cap."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport):
            super().connection_made(transport)
            if not guard.admit(self):
                self.drop()
                return
            self._start_deadline()

        def connection_lost(self, exc):
            guard.forget(self)
            self._cancel_deadline()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.DONE:  # the whole request is in: the app has it
                self._cancel_deadline()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._start_deadline()

        # -- the limits ---------------------------------------------------------------------
        def idle(self) -> bool:
            """No request is being answered (a request half received counts as idle)."""
            return self.cycle is None or self.cycle.response_complete

        def drop(self) -> None:
            self._cancel_deadline()
            if not self.transport.is_closing():
                self.transport.close()

        def _start_deadline(self) -> None:
            self._cancel_deadline()
            self._deadline = self.loop.call_later(guard.request_timeout, self._on_deadline)

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _on_deadline(self) -> None:
            self._deadline = None
            # no request yet (or half a head), or a body that stopped short: the app, if it
            # waits for that body, is told the client disconnected
            if self.conn.their_state is h11.SEND_BODY or self.conn.their_state is h11.IDLE and self.idle():
                self.drop()

    return GuardedH11Protocol


def accept_error_handler(guard: ConnectionGuard, every: float = REPORT_EVERY):
    """An event-loop exception handler that reports failing ``accept()`` calls (asyncio retries
    each second and reports every failure with a traceback) as one line, at most once every
    ``every`` seconds; anything else goes to the loop's default handler."""

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        message = str(context.get("message", ""))
        if message.startswith("socket.accept() out of system resource"):
            now = time.monotonic()
            if guard.reported_at is None or now - guard.reported_at >= every:
                guard.reported_at = now
                exc = context.get("exception")
                why = getattr(exc, "strerror", None) or exc or "out of resources"
                print(f"statinterp review: warning: cannot accept new connections ({why}; {len(guard.open)} open); "
                      f"retrying each second, reported at most every {every:g} s", file=sys.stderr)
            return
        loop.default_exception_handler(context)

    return handler

SESSION_COOKIE = "statinterp_session"

ACCESS_COOKIE = "statinterp_access"

#: The headers of every rendered page.
PAGE_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

#: The messages of Starlette's own errors (an unknown path, a method the route does not take).
_STARLETTE_MESSAGES = {404: "no such page", 405: "method not allowed"}


def same_token(given: str, expected: str) -> bool:
    """Whether ``given`` is ``expected``, compared in constant time as UTF-8 bytes (so any text,
    ASCII or not, is a yes or a no, never an error)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def local_location(raw_path: bytes, query: str) -> str:
    """A redirect target on this host for the request path ``raw_path``: one leading ``/``
    (``//evil.example/`` or ``/\\evil.example/`` would name another host), every character
    outside the URL-safe set percent-encoded."""
    path = "/" + quote(raw_path.decode("latin-1").lstrip("/\\"), safe="/%:@!$&'()*+,;=-._~")
    return path + ("?" + query if query else "")


def _package_dir(name: str) -> Path:
    return Path(str(resources.files("statinterp.app.review").joinpath(name)))


class CsrfTokens:
    """The browser sessions and their CSRF tokens: a session is a random id in an ``HttpOnly``,
    ``SameSite=Strict`` cookie, its token an HMAC of the id with this server's ``secret``."""

    def __init__(self, secret: bytes):
        self.secret = secret

    def token(self, session_id: str) -> str:
        return hmac.new(self.secret, session_id.encode(), hashlib.sha256).hexdigest()

    @staticmethod
    def session_id(request: Request) -> tuple[str, bool]:
        """The request's session id, and whether it is new (no valid cookie: one to set)."""
        sid = request.cookies.get(SESSION_COOKIE, "")
        if len(sid) == 43 and sid.replace("-", "").replace("_", "").isalnum():
            return sid, False
        return secrets.token_urlsafe(32), True

    def check(self, request: Request) -> None:
        """Forbidden unless the ``X-CSRF-Token`` header or the ``csrf`` query parameter is the
        token of the request's session cookie."""
        cookie = request.cookies.get(SESSION_COOKIE)
        given = request.headers.get("x-csrf-token") or request.query_params.get("csrf") or ""
        if not cookie or not same_token(given, self.token(cookie)):
            raise Forbidden("missing or wrong CSRF token: reload the page and try again")


class CsrfCheck:
    """Route middleware of every state-changing (POST) route: the CSRF token is checked before
    the view runs, so before any body is read (a request without it costs nothing)."""

    def __init__(self, app: ASGIApp, tokens: CsrfTokens):
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.tokens.check(Request(scope))
        await self.app(scope, receive, send)


class AccessToken:
    """Every request needs ``token`` (``--host``): ``?token=`` once (answered by a redirect to the
    same URL without it, setting a cookie), then the cookie; otherwise 403."""

    def __init__(self, app: ASGIApp, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        if same_token(request.cookies.get(ACCESS_COOKIE, ""), self.token):
            return await self.app(scope, receive, send)
        if same_token(request.query_params.get("token", ""), self.token):
            params = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            location = local_location(scope.get("raw_path") or request.url.path.encode(), urlencode(params))
            response: Response = RedirectResponse(location, status_code=303)
            response.set_cookie(ACCESS_COOKIE, self.token, httponly=True, samesite="strict")
        else:
            response = HTMLResponse("<!doctype html><title>Access token required</title><p>This review needs "
                                    "its access token: open the URL that <code>statinterp review</code> "
                                    "printed.</p>", status_code=403)
        await response(scope, receive, send)


class CatchAll:
    """A bug in a request: one line in the server log and a 500 page (``error_page(request,
    status, message)``), not a traceback; a client that went away gets nothing."""

    def __init__(self, app: ASGIApp, error_page: Callable[[Request, int, str], Response]):
        self.app, self.error_page = app, error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except ClientDisconnect:  # the client went (or was dropped for its slow body): nobody to answer
            return
        except Exception as exc:  # noqa: BLE001 - reported as one line
            print(f"statinterp review: error: internal error ({type(exc).__name__}: {exc}); this is a bug",
                  file=sys.stderr)
            if started or scope["type"] != "http":
                return
            response = self.error_page(Request(scope), 500,
                                       f"internal error ({type(exc).__name__}); the server log has one line about it")
            await response(scope, receive, send)


class ReviewApp(Starlette):
    """The app reviewing ``session``'s term: its routes are :data:`~.urls.ROUTES` mapped to the
    :class:`~.views.Views` methods of the same name, plus the static files.

    ``access_token``: required of every request (:class:`AccessToken`); ``allowed_hosts``: the
    only ``Host`` headers answered (others: 400); ``secret``: the key of the CSRF tokens (default:
    random, so a restart ends every browser session)."""

    def __init__(self, session: ReviewSession, *, access_token: str | None = None,
                 allowed_hosts: list[str] | None = None, secret: bytes | None = None):
        self.session = session
        self.csrf = CsrfTokens(secret or secrets.token_bytes(32))
        self.urls = Urls(session.key)
        self.templates = self._templates()
        self.views = Views(session, self.urls, self.render)
        middleware = [
            *([Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []),
            Middleware(CatchAll, error_page=self.error_page),
            *([Middleware(AccessToken, token=access_token)] if access_token is not None else []),
        ]
        super().__init__(routes=self._routes(), middleware=middleware, exception_handlers={
            HTTPException: self._on_starlette_error, HTTPError: self._on_http_error,
            StatinterpError: self._on_statinterp_error})

    def _routes(self) -> list[BaseRoute]:
        """One route per row of the route table; a POST route checks the CSRF token first."""
        csrf = [Middleware(CsrfCheck, tokens=self.csrf)]
        routes: list[BaseRoute] = [Route(path, getattr(self.views, name), methods=list(methods),
                                         middleware=csrf if "POST" in methods else None)
                                   for name, path, methods in ROUTES]
        routes.append(Mount(STATIC_PREFIX, StaticFiles(directory=str(_package_dir("static"))), name="static"))
        return routes

    def _templates(self) -> Environment:
        env = Environment(loader=FileSystemLoader(str(_package_dir("templates"))),
                          autoescape=select_autoescape(default=True, default_for_string=True))
        env.filters["term"] = lambda text: highlight_term(text, self.session.term.query)
        env.filters["utc"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
        env.globals.update(label_keys=LABEL_KEYS, urls=self.urls, script_urls=json.dumps(self.urls.for_script()))
        return env

    # ------------------------------------------------------------------------------ responses

    def render(self, request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        """The page ``name`` (a template) with ``ctx``, the session and the request's CSRF token;
        a browser without a session gets its cookie."""
        sid, new = self.csrf.session_id(request)
        ctx.setdefault("term", self.session.term)
        html = self.templates.get_template(name).render(request=request, csrf=self.csrf.token(sid),
                                                        session=self.session, **ctx)
        response = HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)
        if new:
            response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict")
        return response

    def error_page(self, request: Request, status: int, message: str) -> Response:
        """An error: JSON ``{"ok": false, "error": message}`` to the script, a page otherwise."""
        if request.headers.get("accept", "").startswith("application/json") or request.method == "POST" and \
                request.headers.get("content-type", "").startswith("application/json"):
            return JSONResponse({"ok": False, "error": message}, status_code=status)
        return self.render(request, "error.html", status=status, status_code=status, message=message)

    # ------------------------------------------------------------------------------ exception handlers

    async def _on_starlette_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        status = exc.status_code
        message = exc.detail if exc.detail and status not in _STARLETTE_MESSAGES \
            else _STARLETTE_MESSAGES.get(status, str(exc.detail))
        return self.error_page(request, status, message)

    async def _on_http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPError)
        if exc.status >= 500:
            print(f"statinterp review: error: {exc.message}", file=sys.stderr)
        return self.error_page(request, exc.status, exc.message)

    async def _on_statinterp_error(self, request: Request, exc: Exception) -> Response:
        return await self._on_http_error(request, http_error(exc))


def create_app(session: ReviewSession, *, access_token: str | None = None,
               allowed_hosts: list[str] | None = None, secret: bytes | None = None) -> ReviewApp:
    """The app reviewing ``session``'s term (:class:`ReviewApp`)."""
    return ReviewApp(session, access_token=access_token, allowed_hosts=allowed_hosts, secret=secret)


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


def make_server(app, *, request_timeout: float | None = None, open_file_limit: int | None = None):
    """The uvicorn server of ``app``, with the limits of :mod:`.connections`: a whole request
    within ``request_timeout`` seconds, at most :func:`~.connections.connection_cap` open
    connections (from ``open_file_limit``; default: this process's limit, first raised),
    accept() errors reported once."""
    import asyncio

    import uvicorn

    limit = open_file_limit if open_file_limit is not None else raise_open_file_limit()
    guard = ConnectionGuard(connection_cap(limit),
                                   request_timeout if request_timeout is not None else REQUEST_TIMEOUT)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=3,
                            http=protocol_class(guard), timeout_keep_alive=KEEP_ALIVE,
                            limit_concurrency=guard.cap + 1, h11_max_incomplete_event_size=16 * 1024,
                            backlog=BACKLOG)

    class Server(uvicorn.Server):
        async def serve(self, sockets=None):
            asyncio.get_running_loop().set_exception_handler(accept_error_handler(guard))
            await super().serve(sockets=sockets)

    server = Server(config)
    server.guard = guard  # type: ignore[attr-defined]
    return server


def serve(app, sock: socket.socket, url: str, open_browser: bool = True) -> None:
    """Run ``app`` on the bound socket until Ctrl-C/SIGTERM; open ``url`` in the browser once it listens."""
    server = make_server(app)
    if open_browser:
        def when_started() -> None:
            for _ in range(200):
                if server.started:
                    webbrowser.open(url)
                    return
                threading.Event().wait(0.05)

        threading.Thread(target=when_started, daemon=True).start()
    server.run(sockets=[sock])
