"""The review app's HTTP errors: one class per status, raised by the views and answered by the app
(a JSON ``{"ok": false, "error": ...}`` for script requests, an error page otherwise).

A request the client got wrong is a 4xx (:class:`BadRequest`, :class:`Forbidden`,
:class:`NotFound`, :class:`PayloadTooLarge`); a fault of the server is a :class:`ServerFault`
(500), never a 400. Anything else a view raises is a bug: the app answers 500 and logs one line.
"""

from __future__ import annotations

__all__ = ["BadRequest", "Forbidden", "HTTPError", "NotFound", "PayloadTooLarge", "ServerFault", "http_error"]


class HTTPError(Exception):
    """An error answered with ``status`` and its message."""

    status = 500

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class BadRequest(HTTPError):
    status = 400


class Forbidden(HTTPError):
    status = 403


class NotFound(HTTPError, LookupError):
    """An unknown term, sentence or method in a request."""

    status = 404


class PayloadTooLarge(HTTPError):
    status = 413


class ServerFault(HTTPError):
    """The server could not do what a valid request asked (e.g. the label store cannot be written)."""

    status = 500


def http_error(exc: Exception) -> HTTPError:
    """The HTTP error for a statinterp error a view let through: the session refused what the
    request asked (a :class:`~statinterp.errors.UsageError`: an unknown label, a note too long) is a
    :class:`BadRequest`; anything else (a label store that cannot be written) is the server's:
    :class:`ServerFault`."""
    from statinterp.errors import UsageError

    if isinstance(exc, HTTPError):
        return exc
    return BadRequest(str(exc)) if isinstance(exc, UsageError) else ServerFault(str(exc))
