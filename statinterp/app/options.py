"""Options and helpers shared by several ``statinterp`` commands (data loading, output, method names)."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from statinterp.cache import files as atomic
from statinterp.errors import UsageError, closest_names, did_you_mean

if TYPE_CHECKING:
    from statinterp.corpus.authority import CaseFilter

#: The shipped learned model, accepted by --method wherever a method is.
DEFAULT_MODEL_NAME = "learned:default"

DATA_HELP = ("A term zip, a folder of TERM-*.json files, or a folder of term zips. Default: the example data "
             "(`statinterp example` prints its folder, a model of the format; docs/data-format.md gives it field by "
             "field).")


class OutFile(click.Path):
    """The path of an output file. A trailing slash names a folder, so it is refused rather than
    silently dropped (``Path("dir/new/")`` is ``dir/new``, which would become a file)."""

    name = "file"

    def __init__(self) -> None:
        super().__init__(dir_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.endswith(("/", os.sep)):
            self.fail(f"{value!r} ends with a slash, i.e. names a folder; give a file name, "
                      f"e.g. {value}ranking.txt", param, ctx)
        return super().convert(value, param, ctx)


OUT_FILE = OutFile()


def engine_options(dask_work: str):
    """``--engine``, ``--scheduler`` and ``--workers`` (ingest, find, rank --collection);
    ``dask_work`` says what ``--engine dask`` spreads over the cluster."""
    def decorate(func):
        func = click.option("--workers", type=click.IntRange(1, 256), default=2, show_default=True,
                            help="With --engine dask and no --scheduler: worker processes of the local cluster.")(func)
        func = click.option("--scheduler", default=None, metavar="ADDRESS",
                            help="With --engine dask: the scheduler's address (default: a local cluster of "
                                 "--workers processes).")(func)
        return click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                            help=f"local: everything in this process; dask: {dask_work} on dask.distributed "
                                 "(the same result either way).")(func)
    return decorate


def shard_options(statistics: bool = True):
    """``--shard KEY=VALUE`` (repeatable: search only these shards of a set of shards) and, with
    ``statistics``, ``--shard-statistics all|selected`` (find, rank/review --collection)."""
    def decorate(func):
        if statistics:
            func = click.option("--shard-statistics", type=click.Choice(["all", "selected"]), default="all",
                                show_default=True,
                                help="With --shard: score with the background statistics of every shard of the set "
                                     "(all) or of the selected shards alone (selected).")(func)
        return click.option("--shard", "--shards", "shards", multiple=True, metavar="KEY=VALUE",
                            help="In a collection in shards (`ingest --shard-by`): search only the shard whose KEY "
                                 "(the set's shard key: court, jurisdiction, reporter or source) is VALUE; repeat "
                                 "for several, e.g. --shard 'court=Supreme Court of Marlowe' (VALUE may hold commas "
                                 "and spaces). Default: every shard.")(func)
    return decorate


#: The keyword arguments :func:`filter_options` turns into one ``case_filter``.
_FILTER_PARAMS = ("courts", "jurisdictions", "levels", "since", "until", "published_only")


def filter_options(func):
    """``--court``, ``--jurisdiction``, ``--level`` (repeatable), ``--since``, ``--until`` and
    ``--published-only`` (find, rank/review --collection, labels export, memo), handed to the
    command as one ``case_filter`` (:class:`~statinterp.corpus.authority.CaseFilter`)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from statinterp.corpus.authority import CaseFilter

        values = {name: kwargs.pop(name) for name in _FILTER_PARAMS}
        kwargs["case_filter"] = CaseFilter(courts=tuple(values["courts"]), jurisdictions=tuple(values["jurisdictions"]),
                                           levels=tuple(values["levels"]), since=values["since"] or "",
                                           until=values["until"] or "", published_only=values["published_only"])
        return func(*args, **kwargs)

    options = [
        click.option("--court", "courts", multiple=True, metavar="COURT",
                     help="Only cases of this court: its name as stored, its CourtListener id or its courts-db id "
                          "(ca9, cand, pa, scotus); repeat for several."),
        click.option("--jurisdiction", "jurisdictions", multiple=True, metavar="WHERE",
                     help="Only cases of this jurisdiction: federal, state, or a state's name (Pennsylvania); "
                          "repeatable."),
        click.option("--level", "levels", multiple=True, type=click.Choice(["supreme", "appellate", "trial"]),
                     help="Only cases of courts of this level (from courts-db or CourtListener's courts file); "
                          "repeatable."),
        click.option("--since", default=None, metavar="DATE",
                     help="Only cases decided on or after DATE (YYYY, YYYY-MM or YYYY-MM-DD)."),
        click.option("--until", default=None, metavar="DATE",
                     help="Only cases decided on or before DATE (YYYY, YYYY-MM or YYYY-MM-DD; 2005 keeps all "
                          "of 2005)."),
        click.option("--published-only", is_flag=True,
                     help="Only cases their source calls published (every CAP case; others with a reporter "
                          "citation other than F. App'x)."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


@dataclasses.dataclass(frozen=True)
class CollectionOptions:
    """Where a command reading data finds TERM instead of --data (:func:`collection_options`):
    ``--collection``, the shards and case filters searched, and how the search runs."""

    collection: Path | None = None
    shards: tuple[str, ...] = ()
    shard_statistics: str = "all"
    case_filter: CaseFilter | None = None  # None: every case (as an empty CaseFilter)
    strict: bool = False
    engine: str = "local"
    scheduler: str | None = None
    workers: int = 2


def collection_options(collection_help: str, strict_help: str | None = None, dask_work: str | None = None):
    """``--collection`` (``collection_help``), with ``strict_help`` ``--strict``, with ``dask_work``
    :func:`engine_options`, then :func:`shard_options` and :func:`filter_options` (rank, review,
    memo), handed to the command as one :class:`CollectionOptions` (keyword ``where``)."""
    names = ("collection", "shards", "shard_statistics", "case_filter") + (("strict",) if strict_help else ()) \
        + (("engine", "scheduler", "workers") if dask_work else ())

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            kwargs["where"] = CollectionOptions(**{name: kwargs.pop(name) for name in names})
            return func(*args, **kwargs)

        wrapper = shard_options()(filter_options(wrapper))
        if dask_work:
            wrapper = engine_options(dask_work)(wrapper)
        if strict_help:
            wrapper = click.option("--strict", is_flag=True, help=strict_help)(wrapper)
        return click.option("--collection", "collection", type=click.Path(path_type=Path), default=None,
                            help=collection_help)(wrapper)
    return decorate


def provision_options(func):
    """``--provision-cite CITE`` and ``--uscode FILE`` (rank, memo): the provision's citation, and
    its text read from the US Code title's USLM XML (:mod:`statinterp.corpus.provisions`)."""
    func = click.option("--uscode", type=click.Path(path_type=Path), default=None, metavar="FILE",
                        help="The US Code title's USLM XML (usc18.xml, from uscode.house.gov/download) to read "
                             "--provision-cite's text from.")(func)
    return click.option("--provision-cite", "provision_cite", default=None, metavar="CITE",
                        help="The provision's citation, e.g. '18 U.S.C. § 1839(3)': with --uscode FILE its text is "
                             "read from that title; with --provision/--provision-file it names that text. The cite "
                             "and the text stay together in outputs.")(func)


def resolve_provision(text: str | None, cite: str | None, uscode: Path | None) -> tuple[str | None, str | None]:
    """The provision's (text, citation) from ``--provision``/``--provision-file`` (``text``),
    ``--provision-cite`` and ``--uscode`` (``None``: not given)."""
    if uscode is not None and cite is None:
        raise UsageError("--uscode reads the provision --provision-cite names: give --provision-cite too, e.g. "
                         "--provision-cite '18 U.S.C. § 1839(3)'")
    if uscode is not None:
        if text is not None:
            raise UsageError("give the provision's text with --provision/--provision-file or read it with --uscode, "
                             "not both")
        from statinterp.corpus.provisions import usc_provision

        return usc_provision(uscode, cite or "")
    if cite is not None and text is None:
        raise UsageError(f"--provision-cite {cite!r} needs the provision's text: --uscode FILE (the title's USLM "
                         "XML) or --provision TEXT")
    return text, (" ".join(cite.split()) if cite else None)


def _vectors_option(ctx, param, value):
    from statinterp.vectors.provider import parse_vectors_option

    return parse_vectors_option(value)


def check_vectors(rankers, opts: DataOptions) -> DataOptions:
    """``opts`` with the pretrained vectors the rankers need loaded; fails before the corpus is
    read if a method needs pretrained vectors not given (or unreadable)."""
    from statinterp.vectors.provider import required_pretrained

    loaded = dict(opts.vectors)
    for name in required_pretrained(rankers, opts.vectors):
        if isinstance(loaded[name], Path):
            from statinterp.vectors.embeddings import load_vectors

            loaded[name] = load_vectors(loaded[name])
    return dataclasses.replace(opts, vectors=loaded)


@dataclasses.dataclass(frozen=True)
class DataOptions:
    """The options shared by every command that reads data (:func:`data_options`), as given:
    which data, its statistics, the analysis cache, processes, progress and pretrained vectors."""

    data: Path | None = None
    provisions: Path | None = None
    background: Path | None = None
    statistics: str = "background"
    cache_dir: Path | None = None
    no_cache: bool = False
    jobs: int | None = None
    quiet: bool = False
    #: pretrained name -> file (as given) or loaded vectors (:func:`check_vectors`)
    vectors: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    vector_workers: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DataOptions:
        """The options from click's parameters (a command's keyword arguments or a context's
        ``params``); other parameters are ignored."""
        values = {f.name: params[f.name] for f in dataclasses.fields(cls)}
        return cls(**{**values, "vectors": dict(values["vectors"] or {})})  # a copy: never changed in place

    @property
    def cache(self) -> Path | None | bool:
        """The analysis cache folder: ``False`` with ``--no-cache``, ``None`` for the default."""
        return False if self.no_cache else self.cache_dir


#: The names of :class:`DataOptions`' fields, i.e. of the click parameters :func:`data_options` adds.
_DATA_PARAMS = tuple(f.name for f in dataclasses.fields(DataOptions))


def data_options(func):
    """Add the options shared by every command that reads data, handed to the command as one
    :class:`DataOptions` (keyword ``opts``)."""

    @click.option("--data", "data", type=click.Path(path_type=Path), default=None, help=DATA_HELP)
    @click.option("--provisions", "provisions", type=click.Path(path_type=Path), default=None,
                  help="Provisions JSON file (default: the shipped data/provisions.json).")
    @click.option("--background", type=click.Path(path_type=Path), default=None,
                  help="The background collection: take the statistics (N, df, lengths) from all cases of this "
                       "data (same formats as --data) instead of all cases of --data. Default: all of --data, "
                       "whatever --term selects.")
    @click.option("--statistics", type=click.Choice(["background", "candidates"]), default="background",
                  show_default=True,
                  help="Collection statistics from all units of the loaded cases, or (degenerate, for "
                       "comparison) from the candidates' own units only.")
    @click.option("--cache-dir", type=click.Path(path_type=Path), default=None, envvar="STATINTERP_CACHE",
                  help="Analysis cache folder [env STATINTERP_CACHE; default ~/.cache/statinterp].")
    @click.option("--no-cache", is_flag=True, help="Do not read or write the analysis cache.")
    @click.option("--jobs", type=click.IntRange(1, 64), default=None,
                  help="Processes for text analysis (results are the same for any number). Default: automatic, "
                       "up to 2 when there is much text to analyse, else 1.")
    @click.option("--quiet", "-q", is_flag=True,
                  help="No progress reports (by default: bars on a terminal, else a line every few seconds).")
    @click.option("--vectors", "vectors", multiple=True, metavar="[NAME=]PATH", callback=_vectors_option,
                  help="Pretrained word vectors for the methods w2vec, GloVe and fastt: a word2vec binary/text, "
                       "GloVe text or fastText .vec/.bin file; NAME (w2vec, GloVe or fastt) defaults to the "
                       "file's format. Repeatable.")
    @click.option("--vector-workers", type=click.IntRange(1, 64), default=1, show_default=True,
                  help="Threads for training the domain vectors of w2vec* and fastt*: 1 gives the same "
                       "vectors on every run; more is faster but not reproducible.")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        kwargs["opts"] = DataOptions.from_params({name: kwargs.pop(name) for name in _DATA_PARAMS})
        return func(*args, **kwargs)

    return wrapper


def prepare(opts: DataOptions, terms=None, provision_override=None, require_labels=False, require_term=None):
    from statinterp.workflow import open_corpus, prepare_corpus

    # every term of --data is loaded: it is the background collection (unless --background names
    # one), so --term restricts the terms scored, not the statistics their scores use
    corpus = open_corpus(opts.data, provisions=opts.provisions, provision_override=provision_override)
    for name in list(terms or ()) + ([require_term] if require_term is not None else []):
        corpus.term(name)  # an unknown term fails before the (slow) analysis
    scored = [corpus.term(t) for t in terms] if terms else list(corpus)
    if require_labels and not any(t.labelled for t in scored):
        raise UsageError("no loaded term has labelled sentences: nothing to evaluate (rank works on unlabelled data)")
    background = None
    if opts.background is not None:
        background = open_corpus(opts.background, provisions=opts.provisions)
    return prepare_corpus(
        corpus,
        cache_dir=opts.cache,
        statistics=opts.statistics,
        background=background,
        background_only=background is not None and opts.statistics == "background",
        terms=terms or None,
        n_process=opts.jobs,
        vectors=opts.vectors,
        vector_workers=opts.vector_workers,
        show_progress=not opts.quiet,
    )


def data_args(opts: DataOptions) -> list[str]:
    """The options that choose the data and its statistics, as given (for a report's command)."""
    args = []
    for option in ("data", "background", "provisions"):
        if getattr(opts, option) is not None:
            args += [f"--{option}", str(getattr(opts, option))]
    if opts.statistics != "background":
        args += ["--statistics", opts.statistics]
    return args


def data_name(opts: DataOptions) -> str:
    """--data as given, or the shipped example's folder."""
    if opts.data is not None:
        return str(opts.data)
    from statinterp.workflow import example_data_path

    return f"{example_data_path()} (shipped example)"


def background_record(opts: DataOptions, prepared) -> dict:
    """Which collection the background statistics came from, for reports."""
    if opts.statistics != "background":
        rule, collection = "candidates", None
    elif opts.background is not None:
        rule, collection = "--background", str(opts.background)
    else:
        rule, collection = "--data (all its terms, whatever --term selects)", data_name(opts)
    return {"rule": rule, "collection": collection, "description": prepared.background.description}


def prepare_found(opts: DataOptions, where: CollectionOptions, term: str, provision_text: str | None,
                  provision_citation: str | None = None):
    """Find TERM in ``where.collection`` (on ``where.engine``; in the ``where.shards`` selected of a
    set of shards) and prepare the found sentences with the collection's statistics (a set's: all
    shards', or the selected shards' with ``shard_statistics="selected"``)."""
    from statinterp.workflow import find_in_collection, prepare_found

    assert where.collection is not None
    collection, shards, case_filter = where.collection, where.shards, where.case_filter

    if opts.data is not None or opts.background is not None:
        raise UsageError("give --collection or --data/--background, not both")
    if opts.statistics != "background":
        raise UsageError("--collection ranks with the collection's statistics; --statistics candidates does not apply")
    found, corpus = find_in_collection(collection, term, provisions=opts.provisions, provision_text=provision_text,
                                       engine=where.engine, scheduler=where.scheduler, n_workers=where.workers,
                                       shards=shards, case_filter=case_filter, provision_citation=provision_citation,
                                       strict=where.strict)
    if not opts.quiet:
        click.echo(f"statinterp: {found.summary()}", err=True)
        if case_filter:
            click.echo(f"statinterp: cases filtered: {case_filter.describe()}", err=True)
    if not len(corpus):
        among = f" among the cases kept ({case_filter.describe()})" if case_filter else ""
        raise UsageError(f"no sentence of the collection {collection} mentions {term!r}{among}: nothing to rank")
    return prepare_found(
        collection, corpus, shards=shards, shard_statistics=where.shard_statistics,
        cache_dir=opts.cache,
        n_process=opts.jobs,
        vectors=opts.vectors,
        vector_workers=opts.vector_workers,
        show_progress=not opts.quiet,
    )


def emit(text: str, out: Path | None, force: bool) -> None:
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic.write_text(out, text, force=force)
        click.echo(f"wrote {out}", err=True)


def resolve_method(name: str) -> str:
    """``name`` if the grammar builds it; else the one known name equal to it ignoring case
    (``tf-isf-p`` -> ``TF-ISF-p``); else :class:`UsageError` suggesting the closest names.

    The known names come from :func:`~statinterp.rankers.grammar.list_methods`, whatever the grammar.
    """
    from statinterp.rankers.grammar import build_method, list_methods

    try:
        build_method(name)
        return name.strip()
    except UsageError as exc:
        error = exc
    known = [n for n, _ in list_methods()]
    same = [k for k in known if k.lower() == name.strip().lower()]
    if len(same) == 1:
        return same[0]
    if "+" in name:  # BASE+GATE+...: each part (left of >= too) in the case of a known name
        words = {w.lower(): w for k in known for w in (k, *k.split("+")[1:])}  # names and gate words (Tg, Nr)
        parts = []
        for part in name.strip().split("+"):
            head, op, tail = part.partition(">=")
            parts.append(words.get(head.strip().lower(), head.strip()) + op + tail)
        fixed = "+".join(parts)
        if fixed != name.strip():
            try:
                build_method(fixed)
                return fixed
            except UsageError:
                pass
    close = closest_names(name, known)
    message = str(error)
    if not close or not message.startswith("unknown method"):
        raise error
    head = f"unknown method {name.strip()!r}"
    if message.startswith(head):
        raise UsageError(f"{head} ({did_you_mean(close)}){message[len(head):]}") from None
    raise UsageError(f"{message} ({did_you_mean(close)})") from None


def ranker_of_name(name: str):
    """The ranker of a method name given on the command line (see :func:`resolve_method`);
    ``learned:default`` is the shipped learned model."""
    from statinterp.rankers.grammar import build_method

    if name.strip().lower() == DEFAULT_MODEL_NAME:
        from statinterp.learned.model import default_ranker

        return default_ranker()

    return build_method(resolve_method(name))


def ranker_from_options(method: str, model_file):
    """The ranker of ``--method`` or, if given, of ``--model`` (not both)."""
    if model_file is None:
        if method is None:
            from statinterp.learned.model import default_ranker

            return default_ranker()
        return ranker_of_name(method)
    if click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT:
        raise UsageError("give --method or --model, not both")
    from statinterp.learned.model import load_model

    return load_model(model_file)


def cutoffs_option(ctx, param, values) -> tuple[int, ...]:
    """``--k 5,20 --k 50`` -> (5, 20, 50): cutoffs from repeated and comma-separated values."""
    out: list[int] = []
    for value in values:
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            try:
                k = int(part)
            except ValueError:
                raise click.BadParameter(f"{part!r} is not a whole number (e.g. --k 5,20)") from None
            if k < 1:
                raise click.BadParameter(f"{k} is not a cutoff: give whole numbers >= 1")
            if k not in out:
                out.append(k)
    return tuple(out)


def split_methods(values) -> list[str]:
    """Method names from repeated and comma-separated values (commas inside parentheses,
    as in ``gate(BM25-g,0.4)``, do not split)."""
    out = []
    for v in values:
        depth, part = 0, ""
        for ch in v + ",":
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth <= 0:
                if part.strip():
                    out.append(part.strip())
                part = ""
            else:
                part += ch
    return out


def invocation() -> str:
    """The command line of this invocation, as typed (``statinterp ...``)."""
    from statinterp.provenance import command_line

    obj = click.get_current_context().find_root().obj or {}
    return command_line(obj.get("argv"))


def note_unlabelled(prepared) -> None:
    """Say on stderr which sentences and terms the evaluation leaves out for want of labels."""
    unlabelled = sum(1 for ix in prepared for s in ix.term.sentences if s.label is None)
    skipped = sorted(ix.key for ix in prepared if not ix.term.labelled)
    if unlabelled:
        note = (f"statinterp: note: {unlabelled} unlabelled sentence(s) left out of the evaluation "
                "(condensed lists: NDCG over the labelled sentences in their ranked order)")
        if skipped:
            note += f"; term(s) without labels skipped: {', '.join(skipped)}"
        click.echo(note, err=True)
