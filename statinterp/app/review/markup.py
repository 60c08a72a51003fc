"""HTML for case-law text: everything escaped, then the term or a sentence marked.

Only :class:`markupsafe.Markup` built here reaches the templates unescaped, and it is built
from :func:`markupsafe.escape`-d pieces, so a case containing ``<script>`` shows as text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape

__all__ = ["highlight_span", "highlight_term", "locate"]


@lru_cache(maxsize=64)
def _pattern(query: str) -> re.Pattern[str]:
    from statinterp.text.term_match import term_pattern

    return term_pattern(query)


def highlight_term(text: str, query: str) -> Markup:
    """``text`` escaped, with every occurrence of the term (any of its variants, as
    :func:`statinterp.text.term_match.term_pattern` finds them) in ``<mark class="term">``."""
    try:
        pattern = _pattern(query)
    except ValueError:  # a term without letters or digits: nothing to mark
        return escape(text)
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(escape(text[last:m.start()]))
        out.append(Markup('<mark class="term">') + escape(m.group(0)) + Markup("</mark>"))
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


def locate(haystack: str, needle: str) -> int:
    """Where ``needle`` starts in ``haystack`` (exactly, else ignoring runs of whitespace); -1 if absent."""
    at = haystack.find(needle)
    if at >= 0 or not needle.strip():
        return at
    pattern = r"\s+".join(re.escape(w) for w in needle.split())
    m = re.search(pattern, haystack)
    return m.start() if m else -1


def highlight_span(text: str, start: int, end: int, css: str = "sentence") -> Markup:
    """``text`` escaped with ``text[start:end]`` in ``<mark class=css>``."""
    return (escape(text[:start]) + Markup(f'<mark class="{css}">') + escape(text[start:end])
            + Markup("</mark>") + escape(text[end:]))
