"""``statinterp cache info`` and ``statinterp cache clear``: the one cache store
(:mod:`statinterp.cache.store`) seen from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import click

from statinterp.cache.store import NAMESPACES, CacheStore

_CACHE_DIR = click.option("--cache-dir", type=click.Path(path_type=Path), default=None, envvar="STATINTERP_CACHE",
                          help="Cache folder [env STATINTERP_CACHE; default ~/.cache/statinterp].")


@click.group()
def cache():
    """Inspect or empty statinterp's cache (analysed texts, prepared corpora, vectors, directions,
    stored answers): everything in it is rebuilt when needed."""


@cache.command()
@_CACHE_DIR
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def info(cache_dir, fmt):
    """The cache folder, and the entries and bytes of each namespace."""
    store = CacheStore(cache_dir)
    rows = store.info()
    if fmt == "json":
        click.echo(json.dumps({"folder": str(store.root),
                               "namespaces": {r.name: {"entries": r.entries, "bytes": r.bytes} for r in rows},
                               "entries": sum(r.entries for r in rows), "bytes": sum(r.bytes for r in rows)},
                              indent=2, ensure_ascii=False))
        return
    click.echo(f"cache folder {store.root}")
    for r in rows:
        click.echo(f"  {r.name:<11} {r.entries:>8} entries {r.bytes / 1e6:>10.2f} MB")
    click.echo(f"  {'total':<11} {sum(r.entries for r in rows):>8} entries "
               f"{sum(r.bytes for r in rows) / 1e6:>10.2f} MB")


@cache.command()
@click.argument("namespace", required=False, type=click.Choice(NAMESPACES))
@_CACHE_DIR
def clear(namespace, cache_dir):
    """Remove every entry of NAMESPACE (default: of every namespace)."""
    store = CacheStore(cache_dir)
    removed = store.clear(namespace)
    what = f"the {namespace} namespace" if namespace else "every namespace"
    click.echo(f"removed {removed.entries} entries ({removed.bytes / 1e6:.2f} MB) of {what} from {store.root}")


#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).
COMMANDS: tuple[click.Command, ...] = (cache,)
