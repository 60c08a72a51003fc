"""``statinterp memo``: click command only (the memo is made and written by :mod:`statinterp.app.memo`)."""

from __future__ import annotations

from pathlib import Path

import click

from statinterp.app.options import (
    OUT_FILE,
    CollectionOptions,
    DataOptions,
    check_vectors,
    collection_options,
    data_options,
    prepare,
    prepare_found,
    provision_options,
    ranker_from_options,
    resolve_provision,
)
from statinterp.app.review_commands import LABELS_HELP, label_store_path
from statinterp.cache import files as atomic
from statinterp.errors import UsageError


@click.command()
@click.argument("term")
@data_options
@click.option("--method", "-m", default=None,
              help="Ranking method that orders the sentences (see `statinterp methods`). Default: learned:default.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Rank with a learned model (made by `statinterp train`) instead of --method.")
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@collection_options("Find TERM in this collection (made by `statinterp ingest`) instead of --data.")
@click.option("--top", "-n", type=click.IntRange(1), default=20, show_default=True,
              help="Without a label of high or certain value: how many top-ranked sentences the memo quotes.")
@click.option("--provision", "provision_text", default=None, help="Use this text as the term's source provision.")
@provision_options
@click.option("--out", "-o", type=OUT_FILE, required=True,
              help="The memo to write: .docx (Word), .md (Markdown) or .html, by its extension.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def memo(term, method, model_file, labels_file, top, provision_text, provision_cite, uscode, out, force,
         opts: DataOptions, where: CollectionOptions):
    """Write a research memo of TERM: its provision, the sentences that explain it with their pin
    cites, grouped by jurisdiction and court level, and a table of authorities.

    The sentences are those you labelled high or certain value in `statinterp review` (the label
    store of --data or --collection, or --labels); without such labels, the top --top sentences
    of the ranking, marked unreviewed.

    Example: statinterp memo "technological measure" --collection my-collection --out memo.docx
    """
    from statinterp.app.memo import build_memo, memo_format, memo_summary, write_memo
    from statinterp.corpus.labels import LabelStore
    from statinterp.evaluation.ranking import rank as rank_term

    memo_format(out)  # a bad extension fails before the work
    atomic.check_writable(out, force)
    provision_text, citation = resolve_provision(provision_text, provision_cite, uscode)
    ranker = ranker_from_options(method, model_file)
    opts = check_vectors([ranker], opts)
    if where.collection is not None:
        prepared = prepare_found(opts, where, term, provision_text, citation)
    else:
        if where.shards or where.shard_statistics != "all" or where.case_filter:
            raise UsageError("--shard, --shard-statistics and the case filters (--court, --since, ...) apply to "
                             "--collection only")
        prepared = prepare(opts, require_term=term, provision_override={
            term: (provision_text, citation or "user-supplied")} if provision_text else None)
    index = prepared[term]
    path = label_store_path(where.collection if where.collection is not None else opts.data, labels_file)
    labels: dict[str, str] = {}
    if path.is_file():
        with LabelStore(path) as store:
            labels = store.labels(index.key)
    elif labels_file is not None:
        raise UsageError(f"--labels {labels_file}: no such label store")
    result = build_memo(index.term, rank_term(ranker, index), labels, top=top,
                        filters=where.case_filter.describe() if where.case_filter else "")
    write_memo(result, out, force=force)
    click.echo(f"wrote {out}: {memo_summary(result)}", err=True)


#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).
COMMANDS: tuple[click.Command, ...] = (memo,)
