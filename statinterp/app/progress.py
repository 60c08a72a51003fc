"""Progress bars on standard error (hidden with ``quiet`` or when nothing is long)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

import click


@contextmanager
def progress_bar(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a bar of ``total`` units on stderr while enabled."""
    if not enabled or total <= 0:
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=True, show_percent=True) as bar:
        yield bar.update


def iterate(items, label: str, enabled: bool = True):
    """Iterate ``items`` with a bar counting them."""
    items = list(items)
    with progress_bar(len(items), label, enabled and len(items) > 1) as advance:
        for item in items:
            yield item
            advance(1)
