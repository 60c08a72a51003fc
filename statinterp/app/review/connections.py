"""Connection limits of the review server: what uvicorn leaves open.

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
import sys
import time
from typing import Any

__all__ = ["REQUEST_TIMEOUT", "KEEP_ALIVE", "MAX_CONNECTIONS", "ConnectionGuard", "accept_error_handler",
           "connection_cap", "protocol_class", "raise_open_file_limit"]

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
