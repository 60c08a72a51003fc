"""The review app's routes and URLs, in one place.

:data:`ROUTES` is the route table (name, path pattern, HTTP methods): the app is built from it
(:class:`statinterp.app.review.server.ReviewApp`) and :class:`Urls` builds every URL from the same
patterns, for the views, the templates (``urls`` in every template) and the script (the
``data-urls`` attribute of ``<body>``: :meth:`Urls.for_script`). Nothing else writes a path.

``KEY`` is the term key, ``SID`` a sentence id; both are percent-encoded when put in a URL.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlencode

__all__ = ["ROUTES", "STATIC_PREFIX", "Urls"]

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
