"""``statinterp find``: click command only (the work is in :mod:`statinterp.collection.find` and
:mod:`statinterp.evaluation.against`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from statinterp.app.options import engine_options, filter_options, shard_options
from statinterp.cache import files as atomic
from statinterp.errors import UsageError, terminal_safe


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
@engine_options("segment the matching cases, in runs of whole cases,")
@shard_options(statistics=False)
@filter_options
def find(term, collection, out, force, against, provisions, fmt, strict, engine, scheduler, workers, shards,
         case_filter):
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
                                       n_workers=workers, shards=shards, case_filter=case_filter, strict=strict)
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
COMMANDS: tuple[click.Command, ...] = (find,)
