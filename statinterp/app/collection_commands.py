"""Commands of collections and the cache: ``ingest``, ``collection info``, ``find``, ``cache info``
and ``cache clear`` (click commands only).

**Ingest**: ``statinterp ingest`` and ``statinterp collection info``: click commands only (the work is in
:mod:`statinterp.collection`).

**Find**: ``statinterp find``: click command only (the work is in :mod:`statinterp.collection.find` and
:mod:`statinterp.evaluation.against`).

**Cache**: ``statinterp cache info`` and ``statinterp cache clear``: the one cache store
(:mod:`statinterp.cache.store`) seen from the command line.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import ExitStack
from pathlib import Path

import click

from statinterp.app.options import engine_options, filter_options, shard_options
from statinterp.app.output import terminal_safe
from statinterp.cache import files as atomic
from statinterp.cache.store import NAMESPACES, CacheStore
from statinterp.errors import InputError, OutputError, UsageError


class SourceFormatChoice(click.Choice):
    """``--format``'s choices: the formats registered in :mod:`statinterp.sources.registry` when the
    command runs (a format registered after start-up is offered too)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from statinterp.sources.registry import format_names

        return format_names()

    @choices.setter
    def choices(self, value) -> None:
        pass


class ShardKeyChoice(click.Choice):
    """``--shard-by``'s choices, read from :mod:`statinterp.collection.shards` when the command runs
    (that module opens the store, whose imports the CLI's start-up leaves out)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from statinterp.collection.shards import SHARD_KEYS

        return SHARD_KEYS

    @choices.setter
    def choices(self, value) -> None:
        pass


class SourceFormatOption(click.Option):
    """``--format``: its help lists the registered formats with their descriptions."""

    @property
    def help(self) -> str:
        from statinterp.sources.registry import format_help

        return f"Source format (default: sniffed per file): {format_help()}."

    @help.setter
    def help(self, value) -> None:
        pass


def example_sources() -> Path:
    from statinterp.workflow import example_data_path

    return Path(example_data_path()) / "sources"


def _echo(line: str) -> None:
    """A line of a summary or table for the terminal: control characters a file name, record id or
    case name may carry (escape sequences) are shown, never sent (output.terminal_safe)."""
    click.echo(terminal_safe(line))


@click.command()
@click.argument("sources", nargs=-1, type=click.Path(path_type=Path))
@click.option("--collection", "collection", type=click.Path(path_type=Path), required=True,
              help="The collection folder (created if new; ingesting again adds only new or changed cases).")
@click.option("--format", "fmt", cls=SourceFormatOption, type=SourceFormatChoice(), default=None)
@click.option("--encoding", default=None, metavar="NAME",
              help="The text encoding of .txt sources (e.g. latin-1, cp1252). Default: UTF-8; a file that is not "
                   "UTF-8 is decoded by a guessed encoding, named in the summary.")
@click.option("--errors-out", type=click.Path(path_type=Path), default=None,
              help="Write every skipped record (file, record, field, reason) to this file, one JSON object a line "
                   "(checked before the ingest starts).")
@click.option("--force", is_flag=True, help="Overwrite --errors-out if it exists.")
@click.option("--allow-skips", is_flag=True,
              help="Exit 0 even when most records of a source file are skipped (more than half, and at least 10: "
                   "by default that ends with exit status 2, as the file is probably not of the format read), or "
                   "when a CourtListener join leaves more than a few cases without their cluster, docket or court.")
@click.option("--shard-by", type=ShardKeyChoice(), default=None,
              help="Write the collection in shards: one collection per court, jurisdiction, reporter or source "
                   "format under the folder, with a manifest (docs/collection.md, \"Shards\"). Default: one file.")
@engine_options("parse and analyse partitions (one per source file), and with --shard-by write the shards")
@click.option("--split-parts", type=click.IntRange(0, 128), default=None, metavar="N",
              help="With --engine dask: split each CourtListener opinions file into N parts by cluster, one "
                   "partition each, in COLLECTION/.split/ (removed at the end); 0: never. Default: files of at "
                   "least 16 MiB into 2 parts per worker (of --workers, or of the --scheduler's cluster; "
                   "docs/data-format.md, \"CourtListener\").")
@click.option("--citations/--no-citations", default=True, show_default=True,
              help="Extract case, statute and journal citations with eyecite (it takes longer than the analysis: "
                   "about 2.6 times as long, benchmarks/RESULTS.md).")
@click.option("--format-summary", "summary_fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="The final summary as text or as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def ingest(sources, collection, fmt, encoding, errors_out, force, allow_skips, shard_by, engine, scheduler, workers,
           split_parts, citations, summary_fmt, quiet):
    """Read bulk case law (SOURCE: files or folders) into a collection folder.

    Without SOURCE, ingests the shipped example sources (invented cases in every format).
    Malformed records (and records over a limit: docs/collection.md) are skipped and listed; a
    source file most of whose records are skipped ends the command with exit status 2 after the
    ingest (unless --allow-skips). A source that cannot be read stops the command (exit 2) with
    the collection as it was after the last whole batch: run the same command again to complete
    it. CourtListener's bulk opinions file is joined with the clusters, dockets, courts and
    citations files beside it (or given too). Examples:

        statinterp ingest cap/my-reporter/ --collection my-collection

        statinterp ingest opinions-2025-12-02.csv.bz2 --collection my-collection
    """
    from statinterp.collection.ingest import ingest as run_ingest
    from statinterp.progress import counter

    if errors_out is not None:  # checked before the ingest, not after it
        atomic.check_writable(errors_out, force)
        folder = next(p for p in errors_out.absolute().parents if p.exists())
        if not os.access(folder, os.W_OK):  # e.g. a read-only mount (root too)
            raise OutputError(f"cannot write {errors_out}: {folder} is not writable")
    if not sources:
        sources = (example_sources(),)
        click.echo(f"no SOURCE given: ingesting the example sources in {sources[0]}", err=True)
    with ExitStack() as stack:
        on_skip = None
        if errors_out is not None:  # streamed as they come (memory does not grow with bad records), renamed at the end
            tmp = stack.enter_context(atomic.replace(errors_out, force=force))
            sink = stack.enter_context(open(tmp, "w", encoding="utf-8", newline=""))

            def on_skip(s) -> None:
                sink.write(json.dumps({"file": s.file, "record": s.record, "field": s.field, "reason": s.reason},
                                      ensure_ascii=False) + "\n")

        # a bar on a terminal, else a line every few seconds (statinterp.app.cli)
        with counter("ingest", enabled=not quiet, unit="cases") as advance:
            summary = run_ingest(sources, collection, fmt=fmt, engine=engine, scheduler=scheduler,
                                 citations=citations, progress=advance, n_workers=workers, encoding=encoding,
                                 shard_by=shard_by, split_parts=split_parts, on_skip=on_skip,
                                 command=_command_line())
    if summary_fmt == "json":
        out = summary.as_dict()
        out["skipped_records"] = [s.line() for s in summary.skipped]  # the first MAX_SKIPPED_KEPT
        click.echo(json.dumps(out, indent=2))
    else:
        _print_summary(summary, collection, engine, errors_out)
    if summary.broken_joins and not allow_skips:
        source, companion, kind, missing, cases = summary.broken_joins[0]
        row = {"clusters": "cluster", "dockets": "docket", "courts": "court"}[kind]
        raise InputError(companion, f"{missing} of the {cases} cases of {source} found no {row} row in it: is it "
                         f"the {kind} file of the same export, readable (its header)? The cases are stored without "
                         f"their {row}'s fields; --allow-skips accepts this")
    if summary.mostly_skipped and not allow_skips:
        path, skipped, total = summary.mostly_skipped[0]
        more = len(summary.mostly_skipped) - 1
        others = f" (and {more} more source file{'s' if more > 1 else ''} like it)" if more else ""
        raise InputError(path, f"{skipped} of its {total} records were skipped{others}: is it of the format it "
                         "was read as? The cases read are stored; --allow-skips accepts this")


def _command_line() -> str | None:
    """The command line of the running ``statinterp`` command (shell-quoted), or None."""
    import shlex

    ctx = click.get_current_context(silent=True)
    argv = ctx.find_root().obj.get("argv") if ctx is not None and isinstance(ctx.find_root().obj, dict) else None
    return shlex.join(["statinterp", *argv]) if argv else None


def _print_summary(summary, collection: Path, engine: str, errors_out: Path | None) -> None:
    d = summary.as_dict()
    _echo(f"{collection}: {d['cases_read']} cases read in {d['seconds']:.1f} s "
               f"({d['cases_per_second'] or 0:.1f} cases/s, {d['input_bytes'] / max(d['seconds'], 1e-9) / 1e6:.2f} MB/s"
               f", engine {engine}): {d['added']} added, {d['replaced']} replaced, {d['unchanged']} unchanged; "
               f"{d['opinions']} opinions and {d['paragraphs']} paragraphs stored; {d['skipped']} records skipped")
    if summary.split_parts:
        _echo(f"  split: CourtListener opinions files into {summary.split_parts} parts by cluster "
                   f"({summary.split_seconds:.1f} CPU s)")
    for file, encoding in summary.decoded:
        _echo(f"  decoded: {file} is not UTF-8; read as {encoding} (a guess; --encoding forces one)")
    for (source, companion, kind), (missing, cases) in summary.unjoined.items():
        _echo(f"  unjoined: {missing} of the {cases} cases of {source} found no row in {companion} ({kind})")
    for s in summary.skipped[:20]:
        _echo(f"  skipped: {s.line()}")
    if summary.skipped_count > 20:
        where = f" (all in {errors_out})" if errors_out else " (--errors-out FILE lists them all)"
        _echo(f"  ... and {summary.skipped_count - 20} more{where}")


@click.group()
def collection():
    """Inspect a collection made by `statinterp ingest`."""


@collection.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True,
              help="Exit 2 when an ingest into the collection did not finish (it may lack cases).")
def info(folder, fmt, strict):
    """Counts, sources, statistics date and size on disk of a collection (of a set of shards: the
    set's totals, then one line per shard); says when an ingest into it did not finish, and the
    command that completes it."""
    from statinterp.collection.shards import open_collection, unfinished_ingest, unfinished_note
    from statinterp.collection.store import damage_named

    with damage_named(folder), open_collection(folder) as c:
        d = c.info()
        unfinished = unfinished_ingest(c)
    d["unfinished_ingest"] = unfinished
    if unfinished is not None and strict:
        raise InputError(folder, unfinished_note(folder, unfinished).split(": ", 1)[1] + " (--strict)")
    if fmt == "json":
        click.echo(json.dumps(d, indent=2, ensure_ascii=False))
        return
    shards = f", {len(d['shards'])} shards by {d['shard_by']}" if "shards" in d else ""
    _echo(f"collection {d['collection']} (format {d['format']}{shards})")
    if unfinished is not None:
        _echo("  INCOMPLETE: " + unfinished_note(folder, unfinished).split(": ", 1)[1])
    _echo(f"  {d['cases']} cases, {d['opinions']} opinions, {d['paragraphs']} paragraphs")
    _echo("  by source format: " + ", ".join(f"{k} {v}" for k, v in d["by_source"].items()))
    _echo("  citations: " + (", ".join(f"{k} {v}" for k, v in d["citations"].items()) or "none"))
    _echo(f"  statistics (as of {d['statistics_date']}): " + "; ".join(
        f"{lvl} N={v['units']} tokens={v['tokens']}" for lvl, v in d["statistics"].items()))
    size = d["size_bytes"]
    _echo(f"  size on disk: {size / 1e6:.2f} MB" + (f" ({d['bytes_per_case'] / 1e3:.1f} kB per case)"
                                                         if d["bytes_per_case"] else ""))
    _echo(f"  sources ({len(d['sources'])}):")
    for s in d["sources"]:
        _echo(f"    {s['path']} [{s['format']}] {s['cases']} cases, {s['skipped']} skipped, {s['ingested_at']}")
    if "shards" in d:
        _echo(f"  shards by {d['shard_by']} ({len(d['shards'])}):")
        for s in d["shards"]:
            _echo(f"    {s['key']}: {s['cases']} cases, {s['opinions']} opinions, {s['paragraphs']} paragraphs, "
                       f"{s['size_bytes'] / 1e6:.2f} MB ({s['folder']})")


@collection.command()
@click.argument("folder", type=click.Path(path_type=Path))
def finish(folder):
    """Finish the shards of a set of shards: merge each shard's full-text indexes into one segment
    and write its word list (which lets `find` pass over a shard lacking a word of the term
    without opening it). `ingest` finishes the shards it writes; this is for a set written by an
    earlier statinterp or by a stopped ingest. Shards already finished are left as they are."""
    from statinterp.collection.shards import finish_set, is_shard_set
    from statinterp.collection.store import damage_named
    from statinterp.errors import UsageError

    if not is_shard_set(folder):
        raise UsageError(f"{folder} is not a set of shards (no manifest.json); only the shards of a set "
                         "(`ingest --shard-by`) have word lists")
    with damage_named(folder):
        total, finished = finish_set(folder)
    click.echo(f"{folder}: {len(finished)} of {total} shards finished"
               + ("" if finished else " (every shard's word list was up to date)"))

#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).


@click.command()
@click.argument("term")
@click.option("--collection", "collection", type=click.Path(path_type=Path), required=True,
              help="The collection folder (made by `statinterp ingest`): one file, or a set of shards read as one.")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Write the found sentences as a data-set term zip (default: TERM.zip in the current folder, "
                   "TERM with spaces as underscores); every command reads it with --data. Each sentence carries its "
                   "citation (pin_cite), pinned to the page it starts on (pin_page) where the sources had page labels.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--against", "against", type=click.Path(path_type=Path), default=None,
              help="Labelled data of the term (a data-set term zip or folder): report how many labelled sentences "
                   "were found and carry their labels over to the found sentences written to --out.")
@click.option("--provisions", "provisions", type=click.Path(path_type=Path), default=None,
              help="Provisions file for --against (default: the shipped provisions).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Summary on stdout: one line of text, or JSON.")
@click.option("--strict", is_flag=True,
              help="Refuse (exit 2) a collection an ingest into did not finish (it may lack "
                   "cases), rather than warn.")
@click.option("--headings", is_flag=True,
              help="Return headings that mention TERM as well (\"III. Summary Judgment\", \"General rule\"): "
                   "by default a heading line is no sentence; each sentence names the heading it stands under "
                   "(section).")
@engine_options("segment the matching cases, in runs of whole cases,")
@shard_options(statistics=False)
@filter_options
def find(term, collection, out, force, against, provisions, fmt, strict, headings, engine, scheduler, workers,
         shards, case_filter):
    """Find every sentence of a collection that mentions TERM and write it in the data set's format.

    Matches are case-insensitive and include inflections and possessives ("technological measures",
    "measure's"), hyphen, space and closed variants ("pre-employment", "preemployment") and line
    breaks inside the term. Sentences come from the legal segmenter with line joining (a sentence
    broken by a footnote-number line or a quoted list item stays whole).

    Example: statinterp find "technological measure" --collection my_collection --out technological_measure.zip
    """
    from statinterp.collection.find import term_zip_bytes
    from statinterp.corpus.dataset import term_key
    from statinterp.evaluation.against import compare_with_labelled, labelled_tables
    from statinterp.workflow import find_in_collection, open_corpus

    key = term_key(term)
    if not key:
        raise UsageError("TERM is empty")
    out = out if out is not None else Path(f"{key}.zip")
    atomic.check_writable(out, force)
    labelled = None
    if against is not None:  # read before the search: a bad file fails fast
        labelled = open_corpus(against, provisions=provisions).term(key)
        if not labelled.labelled:
            raise UsageError(f"{against}: term {key!r} has no labelled sentences to compare with")
    started = time.perf_counter()
    found, corpus = find_in_collection(collection, term, provisions=provisions, engine=engine, scheduler=scheduler,
                                       n_workers=workers, shards=shards, case_filter=case_filter, strict=strict,
                                       headings=headings)
    seconds = time.perf_counter() - started
    if not found.tables["sentence"]:
        where = f" among the cases kept ({case_filter.describe()})" if case_filter else ""
        raise UsageError(f"no sentence of the collection {collection} mentions {term!r}{where}; nothing written")
    tables = found.tables
    report = {"term": key, "collection": str(collection), "out": str(out), "seconds": round(seconds, 3),
              **found.counts, "fts_hits": found.paragraphs_searched, "paragraphs_matched": found.paragraphs_matched}
    if shards:
        report["shards"] = list(shards)
    if case_filter:
        report["filters"] = case_filter.as_dict()
    lines = [found.summary() + f" in {seconds:.2f} s"]
    if case_filter:
        lines.append(f"cases filtered: {case_filter.describe()}")
    if labelled is not None:
        result = compare_with_labelled(found.term_data(), labelled)
        tables = labelled_tables(found.tables, result.labels)
        report["against"] = result.as_dict()
        lines.append(result.summary())
        lines.append("note: `statinterp evaluate --data OUT` scores the candidates that carry a label; the "
                     f"{result.extra} without one are left out (condensed lists)")
    atomic.write_bytes(out, term_zip_bytes(key, tables, found.filters), force=force)
    lines.append(f"wrote {out}")
    if key in corpus.terms and corpus.terms[key].provision is None:
        report["provision"] = None
        lines.append(f"note: no source provision for {key!r}: rank it with --provision TEXT, --provision-file FILE "
                     "or --provision-cite CITE --uscode FILE")
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(terminal_safe("\n".join(lines), keep_newlines=True))

#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).

_CACHE_DIR = click.option("--cache-dir", type=click.Path(path_type=Path), default=None, envvar="STATINTERP_CACHE",
                          help="Cache folder [env STATINTERP_CACHE; default ~/.cache/statinterp].")


@click.group()
def cache():
    """Inspect or empty statinterp's cache (analysed texts, prepared corpora, vectors, directions,
    stored answers): everything in it is rebuilt when needed."""


@cache.command("info")
@_CACHE_DIR
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def cache_info(cache_dir, fmt):
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


@cache.command("clear")
@click.argument("namespace", required=False, type=click.Choice(NAMESPACES))
@_CACHE_DIR
def cache_clear(namespace, cache_dir):
    """Remove every entry of NAMESPACE (default: of every namespace)."""
    store = CacheStore(cache_dir)
    removed = store.clear(namespace)
    what = f"the {namespace} namespace" if namespace else "every namespace"
    click.echo(f"removed {removed.entries} entries ({removed.bytes / 1e6:.2f} MB) of {what} from {store.root}")

#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).


COMMANDS: tuple[click.Command, ...] = (ingest, collection, find, cache,)
