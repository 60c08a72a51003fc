"""``statinterp rank``, ``evaluate``, ``qrels``, ``methods``, ``example`` and ``explain``: click commands."""

from __future__ import annotations

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
    cutoffs_option,
    data_options,
    emit,
    invocation,
    note_unlabelled,
    prepare,
    prepare_found,
    provision_options,
    ranker_from_options,
    ranker_of_name,
    resolve_provision,
    split_methods,
)
from statinterp.app.output import RANK_FORMATS, TABLE_FORMATS, terminal_safe
from statinterp.cache import files as atomic
from statinterp.errors import StatinterpWarning, UsageError


@click.command()
@click.argument("term")
@data_options
@click.option("--method", "-m", default=None,
              help="Ranking method (see `statinterp methods`). Default: the shipped learned model, learned:default "
                   "(trained on the 14 annotated terms; needs no word vectors).")
@click.option("--top", "-n", type=click.IntRange(0), default=10, show_default=True,
              help="How many sentences to show (0 = all).")
@click.option("--format", "fmt", type=click.Choice(RANK_FORMATS), default="table", show_default=True)
@click.option("--provision", "provision_text", default=None, help="Use this text as the term's source provision.")
@click.option("--provision-file", type=click.Path(path_type=Path), default=None,
              help="Read the provision from this text file.")
@provision_options
@click.option("--out", "-o", type=OUT_FILE, default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Rank with a learned model (made by `statinterp train`) instead of --method.")
@collection_options("Find TERM in this collection (made by `statinterp ingest`) and rank what is found, with the "
                    "collection's background statistics (instead of --data).",
                    strict_help="With --collection: refuse (exit 2) a collection an ingest into did not finish (it "
                                "may lack cases), rather than warn.",
                    dask_work="segment the matching cases of --collection, in runs of whole cases,")
@click.option("--dedupe", is_flag=True,
              help="Collapse near-duplicate sentences (token Jaccard >= --dedupe-threshold) to their best-ranked copy.")
@click.option("--dedupe-threshold", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Token-set Jaccard from which two sentences count as copies (with --dedupe).")
@click.option("--feedback", "feedback_file", type=click.Path(path_type=Path), default=None, metavar="LABELS",
              help="Re-rank with your labels of this term's sentences: a JSON-lines file of "
                   '{"sentence_id": ..., "label": ...} or a labelled term zip. A learner fitted on them is '
                   "blended with the method's (or model's) scores.")
@click.option("--order", type=click.Choice(["score", "authority"]), default="score", show_default=True,
              help="How to show the top sentences: by score, or by authority (court level: supreme, appellate, "
                   "trial; then the newest first). Each keeps its rank and score: only the reading order changes.")
def rank(term, method, top, fmt, provision_text, provision_file, provision_cite, uscode, out, force, model_file,
         dedupe, dedupe_threshold, feedback_file, order, opts: DataOptions, where: CollectionOptions):
    """Rank the sentences that mention TERM.

    Example: statinterp rank vehicle --method BM25-p --top 5
    """
    from statinterp.app.output import format_ranking
    from statinterp.corpus.provisions import read_provision_file
    from statinterp.evaluation.ranking import rank as rank_term

    ranker = ranker_from_options(method, model_file)
    opts = check_vectors([ranker], opts)
    feedback_labels = None
    if feedback_file is not None:
        from statinterp.corpus.labels import read_label_file

        feedback_labels = read_label_file(feedback_file)  # a bad file stops before the analysis
    if provision_text is not None and provision_file is not None:
        raise UsageError("give --provision or --provision-file, not both")
    override = None
    if provision_file is not None:
        provision_text = read_provision_file(provision_file)
    provision_text, citation = resolve_provision(provision_text, provision_cite, uscode)
    if provision_text is not None:
        if not provision_text.strip():
            raise UsageError("--provision is empty")
        try:
            provision_text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("--provision is not valid UTF-8 text (check the shell's locale and quoting)") from None
        override = {term: (provision_text, citation or "user-supplied")}
    if out is not None:
        atomic.check_writable(out, force)
    if where.collection is not None:
        prepared = prepare_found(opts, where, term, provision_text, citation)
    else:
        if where.engine != "local" or where.scheduler is not None:
            raise UsageError("--engine and --scheduler apply to --collection only")
        if where.shards or where.shard_statistics != "all":
            raise UsageError("--shard and --shard-statistics apply to --collection only")
        if where.case_filter:
            raise UsageError("--court, --jurisdiction, --level, --since, --until and --published-only apply to "
                             "--collection only")
        prepared = prepare(opts, provision_override=override, require_term=term)
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

        if order != "score":
            raise UsageError("--order authority and --dedupe: give one of them")
        from statinterp.evaluation.ranking import collapse_ranking

        collapsed = collapse_ranking(ranking, dedupe_threshold)
        emit(format_collapsed(collapsed, fmt, top or None, shown_term=term.strip()), out, force)
        return
    if fmt == "trec" and out is not None:
        _write_trec_scores(out, ranking.method, {ranking.term: ranking}, top or None, force)
    if order != "score" and fmt == "trec":
        raise UsageError("--order authority does not apply to --format trec (a run is in score order)")
    provision = index.term.provision
    shown = {"provision": {"citation": provision.citation, "text": provision.text}} if provision else {}
    if where.case_filter:
        shown["filters"] = where.case_filter.as_dict()
    text = format_ranking(ranking, fmt, top or None, shown_term=term.strip(), order=order, json_extra=shown or None)
    if fmt == "table":  # the provision's cite given, and the case filter, under the heading
        extra = ([f"provision: {provision.citation}" + (f" (from {uscode})" if uscode else "")]
                 if provision_cite is not None and provision is not None else [])
        extra += [f"cases filtered: {where.case_filter.describe()}"] if where.case_filter else []
        if extra:
            heading, _, rest = text.partition("\n")
            text = "\n".join([heading, *extra, rest])
    emit(text, out, force)


def _scores_path(run_file: Path) -> Path:
    return run_file.with_name(run_file.name + ".scores.json")


def _write_trec_scores(run_file: Path, method: str, rankings: dict, top, force: bool) -> None:
    """The raw scores of a TREC run file, beside it (``RUN.scores.json``)."""
    from statinterp.app.output import trec_scores_json
    from statinterp.provenance import run_provenance

    scores = {term: {row.sentence_id: row.score for row in r.rows(top)} for term, r in rankings.items()}
    atomic.write_text(_scores_path(run_file), trec_scores_json(method, scores, run_provenance(invocation())),
                      force=force)


@click.command()
@data_options
@click.option("--method", "-m", "methods", multiple=True,
              help="Method(s) to evaluate; repeat or comma-separate. "
                   "Default: Random, TF-ISF, BM25, QLLM with -c/-o/-p.")
@click.option("--k", "ks", multiple=True, callback=cutoffs_option, metavar="K[,K...]",
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
def evaluate(methods, ks, terms, fmt, macro_only, out, force, model_files, run_file, opts: DataOptions):
    """Per-term and macro NDCG of ranking methods on labelled data.

    Example: statinterp evaluate --data ../shared/data/statutory_interpretation -m TF-ISF-p -m BM25
    """
    from statinterp.app.output import format_evaluation
    from statinterp.evaluation.metrics import parse_metric
    from statinterp.workflow import evaluate_methods

    names = split_methods(methods) or ([] if model_files else default_methods())
    rankers = [ranker_of_name(n) for n in names]
    if model_files:
        from statinterp.learned.model import load_model

        rankers += [load_model(f) for f in model_files]
    opts = check_vectors(rankers, opts)
    metrics = [parse_metric(f"nDCG@{k}") for k in (ks or (10, 100))]
    if out is not None:
        atomic.check_writable(out, force)
    if run_file is not None:
        if len(rankers) != 1:
            raise UsageError(f"--run writes the rankings of one method; {len(rankers)} were given")
        atomic.check_writable(run_file, force)
        atomic.check_writable(_scores_path(run_file), force)
    prepared = prepare(opts, terms=terms or None, require_labels=True)
    note_unlabelled(prepared)
    for ranker in rankers:
        seen = sorted(set(getattr(ranker, "trained_on", ())) & {ix.key for ix in prepared if ix.term.labelled})
        if seen:
            warnings.warn(f"{ranker.name} was trained on {', '.join(seen)}: its results on these terms are not "
                          "held-out (use `statinterp cv` for a fair estimate)", StatinterpWarning, stacklevel=2)
    results = evaluate_methods(prepared, rankers, metrics, show_progress=not opts.quiet)
    if run_file is not None:
        from statinterp.app.output import trec_run
        from statinterp.evaluation.ranking import rank as rank_term

        rankings = {ix.key: rank_term(rankers[0], ix) for ix in prepared if ix.term.labelled}
        _write_trec_scores(run_file, rankers[0].name, rankings, None, force)
        atomic.write_text(run_file, "".join(trec_run(term, r.method, len(r), [row.__dict__ for row in r.rows()])
                                            for term, r in rankings.items()), force=force)
        click.echo(f"wrote {run_file} and {_scores_path(run_file)}", err=True)
    emit(format_evaluation(results, fmt, per_term=not macro_only), out, force)


@click.command()
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
    emit(text, out, force)


def default_methods() -> list[str]:
    return ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")]


@click.command()
def methods():
    """List the ranking methods, one line each, section by section.

    A name marked (example) shows how to compose your own BASE+GATE+... method.
    """
    from statinterp.app.options import DEFAULT_MODEL_NAME
    from statinterp.rankers.grammar import COMPOUND_EXAMPLE, method_sections

    sections = [("Learned model (the default of rank, explain, review, simulate-review)",
                 [(DEFAULT_MODEL_NAME, "the shipped learned model (ensemble on 125 no-vector features, trained on "
                                       "the 14 annotated terms)")]), *method_sections()]
    width = max(len(n) for _, entries in sections for n, _ in entries)
    for i, (section, entries) in enumerate(sections):
        if i:
            click.echo("")
        click.echo(f"{section}:")
        for name, desc in entries:
            mark = "(example) " if name == COMPOUND_EXAMPLE else ""
            click.echo(f"  {name:<{width}}  {mark}{desc}")


@click.command()
def example():
    """Print where the example data lives (the default --data)."""
    from statinterp.workflow import example_data_path

    click.echo(str(example_data_path()))


@click.command()
@click.argument("term")
@click.argument("sentence_id")
@data_options
@click.option("--method", "-m", default=None,
              help="Ranking method (see `statinterp methods`). Default: the shipped learned model, learned:default, "
                   "as for `rank`.")
@click.option("--model", "model_file", type=click.Path(path_type=Path), default=None,
              help="Explain a learned model's ranking (made by `statinterp train`) instead of --method.")
@click.option("--top", "-n", type=click.IntRange(1), default=10, show_default=True,
              help="Learned models: how many of the largest feature contributions to show.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(term, sentence_id, method, model_file, top, fmt, opts: DataOptions):
    """Why sentence SENTENCE_ID of TERM is where it is: the components of its score.

    For a method: the base score, context contributions, gates and thresholds. For a learned
    model: its largest feature contributions.

    Example: statinterp explain vehicle SENTENCE_ID --method Tp-Tg-Nr
    """
    from statinterp.evaluation.explain import explain_sentence, format_explanation
    from statinterp.learned.sentence_patterns import reason_evidence

    ranker = ranker_from_options(method, model_file)
    opts = check_vectors([ranker], opts)
    prepared = prepare(opts, require_term=term)
    text = format_explanation(explain_sentence(ranker, prepared[term], sentence_id, top=top,
                                               evidence=reason_evidence), fmt)
    click.echo(terminal_safe(text, keep_newlines=True) if fmt == "text" else text, nl=False)


#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).
COMMANDS: tuple[click.Command, ...] = (rank, evaluate, qrels, methods, example, explain,)
