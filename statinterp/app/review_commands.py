"""Commands of review: ``review``, ``simulate-review``, ``labels export/import`` and ``memo``
(click commands; the app is in app/review/).

**Review**: ``statinterp review`` and ``statinterp labels export/import``: click commands (the app is in app/review/).

**Memo**: ``statinterp memo``: click command only (the memo is made and written by :mod:`statinterp.app.memo`).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import click

from statinterp.app.options import (
    DATA_HELP,
    OUT_FILE,
    CollectionOptions,
    DataOptions,
    check_vectors,
    collection_options,
    data_options,
    emit,
    filter_options,
    invocation,
    note_unlabelled,
    prepare,
    prepare_found,
    provision_options,
    ranker_from_options,
    resolve_provision,
    shard_options,
)
from statinterp.cache import files as atomic
from statinterp.errors import StatinterpWarning, UsageError

LABELS_HELP = ("Label store (SQLite) to read and write. Default: under ~/.local/share/statinterp/labels/ "
               "($XDG_DATA_HOME), one file per data folder, zip or collection (never inside the data); a "
               "statinterp-labels.sqlite an earlier version left beside the data is still used.")


def label_store_path(data, labels_file) -> Path:
    """The label store of ``data`` (a data folder, zip or collection; ``None``: the example data),
    or ``labels_file`` when given."""
    return _label_store_path(data, labels_file)


def _label_store_path(data, labels_file) -> Path:
    from statinterp.corpus.labels import default_store_path

    return Path(labels_file) if labels_file is not None else default_store_path(data)


@click.command()
@click.argument("term")
@data_options
@click.option("--method", "-m", default=None,
              help="Ranking method to start with (the page offers others; see `statinterp methods`). Default: the "
                   "shipped learned model, learned:default.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Rank with a learned model (made by `statinterp train`) instead of --method.")
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@collection_options("Find TERM in this collection (made by `statinterp ingest`) and review what is found, ranked "
                    "with the collection's statistics (instead of --data).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default=None,
              help="Listen on this address instead of 127.0.0.1 (e.g. 0.0.0.0); a random access token is then "
                   "required, printed once in the URL.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the URL.")
@click.option("--show-labels", is_flag=True,
              help="Show the data set's own labels beside each sentence (hidden by default, so that a reviewer "
                   "can test themselves; they are never used for re-ranking or export).")
@click.option("--continuous/--fixed-order", default=True, show_default=True,
              help="Continuous: after every label the sentences below your last label are re-ranked with all your "
                   "labels, and the page estimates how many valuable sentences are left. Fixed order: the method's "
                   "order until you press \"Re-rank with my labels\".")
def review(term, method, model_file, labels_file, port, host, no_browser, show_labels, continuous, opts: DataOptions,
           where: CollectionOptions):
    """Review TERM's ranked sentences in the browser: read them in context, label, re-rank.

    Labels are written to the label store (--labels) the moment they are given; reopening
    resumes. Export them with `statinterp labels export TERM --out TERM.zip`.

    Example: statinterp review vehicle
    """
    import secrets

    from statinterp.app.review.server import bind_socket, create_app, serve
    from statinterp.app.review.session import ReviewSession
    from statinterp.corpus.labels import LabelStore

    ranker = ranker_from_options(method, model_file)
    opts = check_vectors([ranker], opts)
    store = LabelStore(_label_store_path(where.collection if where.collection is not None else opts.data,
                                         labels_file))
    if where.collection is not None:
        prepared = prepare_found(opts, where, term, None)
    else:
        if where.shards or where.shard_statistics != "all":
            raise UsageError("--shard and --shard-statistics apply to --collection only")
        if where.case_filter:
            raise UsageError("--court, --jurisdiction, --level, --since, --until and --published-only apply to "
                             "--collection only")
        prepared = prepare(opts, require_term=term)
    index = prepared[term]
    session = ReviewSession(index, store, model=ranker,  # a method name, learned:default or --model
                            show_data_labels=show_labels, continuous=continuous)
    if not opts.quiet:
        click.echo(f"Ranking {len(index)} sentences of {index.term.query!r} with {session.default_method} ...",
                   err=True)
    session.ranking()  # the first ranking is computed (and may fail) before the server starts
    listen = host or "127.0.0.1"
    token = secrets.token_urlsafe(24) if host is not None else None
    sock = bind_socket(listen, port)
    actual = sock.getsockname()[1]
    shown = f"[{listen}]" if ":" in listen else listen
    url = f"http://{shown}:{actual}/term/{index.key}" + (f"?token={token}" if token else "")
    allowed = None if host is not None else ["127.0.0.1", "localhost", "::1", "[::1]"]
    app = create_app(session, access_token=token, allowed_hosts=allowed)
    counts = session.counts()
    click.echo(f"Reviewing {index.term.query!r}: {counts['total']} sentences, {counts['labelled']} labelled by you; "
               f"labels in {store.path}", err=True)
    click.echo(f"Open {url}   (Ctrl-C stops the server; every label is already saved)", err=True)
    sys.stderr.flush()
    try:
        serve(app, sock, url, open_browser=not no_browser)
    finally:
        store.close()


@click.command("simulate-review")
@data_options
@click.option("--term", "-t", "terms", multiple=True, help="Simulate only these terms (default: every labelled term).")
@click.option("--method", "-m", default=None,
              help="The method that orders the sentences first (the prior; see `statinterp methods`). Default: "
                   "learned:default.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Use a learned model (made by `statinterp train`) as the prior instead of --method.")
@click.option("--policy", "policies", multiple=True, type=click.Choice(["static", "button-20", "continuous"]),
              help="static: the prior's order; button-20: re-ranked once after 20 labels; continuous: the unread "
                   "rest re-ranked after every label. Repeatable. Default: all three.")
@click.option("--prior-weight", type=click.FloatRange(0, 1), default=None,
              help="Weight of the prior in the re-ranking (default: the shipped continuous setting).")
@click.option("--alpha", type=click.FloatRange(0, min_open=True), default=None,
              help="Ridge penalty of the within-term learner (default: the shipped continuous setting).")
@click.option("--checkpoint-every", type=click.IntRange(0), default=10, show_default=True,
              help="Make the stopping estimate every N sentences read (0: never).")
@click.option("--estimator", type=click.Choice(["mixture", "read-time", "current"]), default="mixture",
              show_default=True,
              help="Which score of a read sentence the stopping estimate's curve is fitted on: when it was read, "
                   "now, or both (the mixture the review page uses; reports/feedback.md).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--out", "-o", type=OUT_FILE, default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def simulate_review(terms, method, model_file, policies, prior_weight, alpha, checkpoint_every, estimator, fmt, out,
                    force, opts: DataOptions):
    """Replay a reviewer on labelled data: how much reading each review order costs.

    The simulated reviewer reads each term's labelled sentences in the order shown and labels
    them with the data set's labels. Reported per term and macro: sentences read to find 50, 80
    and 100 % of the high- and certain-value sentences, how many were found after reading 10, 20
    and 50, and how often the stopping estimate's 90 % interval held the true remainder. JSON
    fields: README (simulate-review).

    Example: statinterp simulate-review --data ../shared/data/statutory_interpretation --policy continuous
    """
    import dataclasses
    import json

    from statinterp.learned.feedback import ContinuousSettings, format_table, simulate, term_runs
    from statinterp.provenance import run_provenance

    ranker = ranker_from_options(method, model_file)
    opts = check_vectors([ranker], opts)
    if out is not None:
        atomic.check_writable(out, force)
    changes = {k: v for k, v in (("prior_weight", prior_weight), ("alpha", alpha)) if v is not None}
    settings = dataclasses.replace(ContinuousSettings(), **changes)
    prepared = prepare(opts, terms=terms or None, require_labels=True)
    note_unlabelled(prepared)
    seen = sorted(set(getattr(ranker, "trained_on", ())) & {ix.key for ix in prepared if ix.term.labelled})
    if seen:
        warnings.warn(f"{ranker.name} was trained on {', '.join(seen)}: its static order on these terms is not "
                      "held-out", StatinterpWarning, stacklevel=2)
    runs = term_runs(prepared, ranker)
    result = simulate(runs, policies or ("static", "button-20", "continuous"), settings,
                      checkpoint_every=checkpoint_every, estimator=estimator)
    if fmt == "json":
        payload = {"prior": ranker.name, **result, "provenance": run_provenance(invocation())}
        text = json.dumps(payload, indent=1) + "\n"
    else:
        text = f"prior: {ranker.name}\n" + format_table(result)
    emit(text, out, force)


@click.group()
def labels():
    """Export and import the labels made with `statinterp review`."""


@labels.command("export")
@click.argument("term")
@click.option("--data", "data", type=click.Path(path_type=Path), default=None, help=DATA_HELP)
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@click.option("--collection", "collection", type=click.Path(path_type=Path), default=None,
              help="The term was reviewed from this collection (`statinterp review --collection`): find it there.")
@shard_options(statistics=False)
@filter_options
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), required=True,
              help="Term zip to write (the data set's format, with your labels).")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def labels_export(term, data, labels_file, collection, shards, case_filter, out, force):
    """Write TERM in the data set's format with the labels from the review.

    The zip works as --data for evaluate, train and cv.

    Example: statinterp labels export vehicle --out vehicle.zip
    """
    from statinterp.corpus.dataset import write_term_zip
    from statinterp.corpus.labels import LabelStore
    from statinterp.workflow import open_corpus

    atomic.check_writable(out, force)
    if collection is not None and data is not None:
        raise UsageError("give --collection or --data, not both")
    if (shards or case_filter) and collection is None:
        raise UsageError("--shard, --court, --jurisdiction, --level, --since, --until and --published-only apply "
                         "to --collection only")
    path = _label_store_path(collection if collection is not None else data, labels_file)
    if not path.is_file():
        raise UsageError(f"no label store at {path}: label the term with `statinterp review` first, "
                         "or give --labels FILE")
    if collection is not None:
        from statinterp.workflow import find_in_collection

        _, found = find_in_collection(collection, term, shards=shards, case_filter=case_filter)
        if not len(found):
            raise UsageError(f"no sentence of the collection {collection} mentions {term!r}: nothing to export")
        term_data = found.term(term)
    else:
        term_data = open_corpus(data, terms=[term]).term(term)
    with LabelStore(path) as store:
        given = {sid: label for sid, label in store.labels(term_data.key).items()}
    known = {s.id for s in term_data.sentences}
    stray = sorted(set(given) - known)
    if stray:
        why = (f"the cases kept ({case_filter.describe()}) do not hold" if case_filter
               else f"{term_data.key!r} no longer has")
        warnings.warn(f"{len(stray)} label(s) in {path} name sentences that {why} "
                      f"(e.g. {stray[0]!r}); they are not exported", StatinterpWarning, stacklevel=2)
    write_term_zip(term_data, out, {sid: lab for sid, lab in given.items() if sid in known}, force=force,
                   filters=case_filter.as_dict() if case_filter else None)
    n = sum(1 for sid in given if sid in known)
    click.echo(f"wrote {out}: {n} of {len(term_data.sentences)} sentences of {term_data.query!r} labelled", err=True)


@labels.command("import")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--data", "data", type=click.Path(path_type=Path), default=None,
              help="The data the labels are for. " + DATA_HELP)
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@click.option("--term", "-t", "terms", multiple=True, help="Import only these terms.")
def labels_import(source, data, labels_file, terms):
    """Read the labels of SOURCE (a term zip or folder in the data set's format, e.g. an export)
    into the label store of --data, where `statinterp review` shows them.

    Example: statinterp labels import vehicle.zip
    """
    from statinterp.corpus.labels import LabelStore
    from statinterp.errors import InputError
    from statinterp.workflow import open_corpus

    incoming = open_corpus(source, terms=terms or None)
    target = open_corpus(data, terms=[t.key for t in incoming])
    plan = []
    for t in incoming:
        known = {s.id for s in target.term(t.key).sentences}
        for s in t.sentences:
            if s.label is None:
                continue
            if s.id not in known:
                raise InputError(f"{source}", f"sentence {s.id!r} is not a sentence of {t.key!r} in the data "
                                 "(import labels into the data they were made for: --data)", record=s.id, field="id")
            plan.append((t.key, s.id, s.label))
    if not plan:
        raise UsageError(f"{source} holds no labelled sentences: nothing to import")
    path = _label_store_path(data, labels_file)
    with LabelStore(path) as store:
        for key in sorted({k for k, _, _ in plan}):
            by_label: dict[str, list[str]] = {}
            for k, sid, label in plan:
                if k == key:
                    by_label.setdefault(label, []).append(sid)
            for label, ids in sorted(by_label.items()):
                store.set_labels(key, ids, label, source=f"import:{Path(source).name}")
    click.echo(f"imported {len(plan)} label(s) into {path}", err=True)

#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).


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


COMMANDS: tuple[click.Command, ...] = (review, simulate_review, labels, memo,)
