"""``statinterp tune``, ``reproduce`` (and its ``--check``), ``train`` and ``cv``: click commands."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import cast

import click

from statinterp.app.options import (
    OUT_FILE,
    DataOptions,
    background_record,
    data_args,
    data_name,
    data_options,
    emit,
    invocation,
    note_unlabelled,
    prepare,
    resolve_method,
    split_methods,
)
from statinterp.cache import files as atomic
from statinterp.errors import UsageError


@click.command()
@click.argument("method")
@data_options
@click.option("--grid", "grids", multiple=True, metavar="NAME=VALUES",
              help='Values of one build_method parameter, e.g. "lam=0,0.1,...,1": a keyword (lam, lam2, '
                   "nwr, qllm_lam, k1, ...) or a part's parameter by its nested name (similarity__k1, "
                   "gates__0__lam); repeat for more parameters (all combinations are tried). Default: the "
                   "grids the method's parts declare: lam (λ1), lam2 (λ2), nwr, qllm_lam, whichever it has.")
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
def tune(method, grids, metric, tune_terms, loo, terms, fmt, out, force, opts: DataOptions):
    """Grid-search METHOD's hyperparameters for the best macro NDCG.

    Example: statinterp tune QLLM-c --data ../shared/data/statutory_interpretation --loo
    """
    from statinterp.app.report import format_tune
    from statinterp.evaluation.metrics import parse_metric
    from statinterp.evaluation.tuning import default_grid, parse_grid, tune_loo
    from statinterp.evaluation.tuning import tune as tune_split

    if loo and tune_terms:
        raise UsageError("give --loo or --tune-term, not both")
    method = resolve_method(method)
    target = parse_metric(metric)
    grid = parse_grid(grids) if grids else default_grid(method)
    if out is not None:
        atomic.check_writable(out, force)
    prepared = prepare(opts, terms=terms or None)
    result = (tune_loo(prepared, method, grid, metric=target, show_progress=not opts.quiet) if loo
              else tune_split(prepared, method, grid, metric=target, tune_terms=tune_terms or None,
                              show_progress=not opts.quiet))
    emit(format_tune(result, fmt), out, force)


@click.command()
@data_options
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
def reproduce(method_set, terms, out_dir, force, check_file, tolerance, only_differences, opts: DataOptions):
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
        names, stem, title = [resolve_method(n) for n in split_methods([method_set])], "reproduction", None
    paths = {ext: out_dir / f"{stem}.{ext}" for ext in ("md", "json", "png")}
    for path in paths.values():
        atomic.check_writable(path, force)
    command = ["statinterp", "reproduce", *data_args(opts)]
    for vec_name, vec_path in opts.vectors.items():
        command += ["--vectors", f"{vec_name}={vec_path}"]
    if opts.vector_workers != 1:
        command += ["--vector-workers", str(opts.vector_workers)]
    if key != "all":
        command += ["--methods", method_set]
    for t in terms:
        command += ["--term", t]
    command += ["--out", str(out_dir).rstrip("/") + "/"]
    metadata = run_provenance(command, version=__version__, data=data_name(opts))
    prepared = prepare(opts, terms=terms or None)
    metadata["background"] = background_record(opts, prepared)
    metadata["arguments"] = {"methods": names, "terms": list(terms), "statistics": opts.statistics,
                             "background": None if opts.background is None else str(opts.background),
                             "provisions": None if opts.provisions is None else str(opts.provisions)}
    rep = run_reproduction(prepared, names, show_progress=not opts.quiet, metadata=metadata)
    atomic.write_set({paths["md"]: reproduction_markdown(rep, title=title, chart=paths["png"].name),
                      paths["json"]: reproduction_json(rep), paths["png"]: reproduction_chart(rep)}, force=force)
    for path in paths.values():
        click.echo(f"wrote {path}", err=True)
    for name, reason in rep.skipped:
        click.echo(f"skipped {name}: {reason}", err=True)


def _check_report(path: Path, tolerance, only_differences: bool, given: DataOptions) -> None:
    """`reproduce --check`: re-run the command a report JSON records and compare every figure."""
    import json
    import shlex

    from statinterp.errors import InputError
    from statinterp.evaluation.tuning import DEFAULT_TOLERANCE, compare_figures, format_check, recorded_run

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
    command = cast(click.Group, click.get_current_context().find_root().command).commands[run["kind"]]
    try:
        params = command.make_context(run["kind"], args[2:], parent=click.get_current_context().parent).params
    except click.UsageError as exc:
        raise InputError(path, f"records a command that no longer parses ({exc.format_message()})",
                         field="command") from None
    source = click.get_current_context().get_parameter_source
    chosen = {name: getattr(given, name) for name in ("data", "cache_dir", "no_cache", "jobs", "quiet")  # the checker's
              if name != "data" or source(name) != click.core.ParameterSource.DEFAULT}
    opts = dataclasses.replace(DataOptions.from_params(params), **chosen)
    quiet = opts.quiet
    if run["kind"] == "reproduce":
        from statinterp.app.report import reproduction_json
        from statinterp.evaluation.tuning import reproduce as run_reproduction

        names = [m["method"] for m in doc["methods"]]
        prepared = prepare(opts, terms=params["terms"] or None)
        now = json.loads(reproduction_json(run_reproduction(prepared, names, show_progress=not quiet)))
    else:
        from statinterp.learned.crossval import cross_validate
        from statinterp.rankers.grammar import paper_compounds

        settings = _feature_settings(params["families"], params["standardise"], params["vector_features"],
                                     params.get("case_citations"))
        compounds = params["compounds"]
        names = paper_compounds() if compounds.strip().lower() == "paper" else split_methods([compounds])
        prepared = prepare(opts, terms=params["terms"] or None, require_labels=True)
        result = cross_validate(prepared, settings, params["learners"] or ("ensemble", "pairwise", "hgb", "linear"),
                                params["mode"], params["n_folds"], params["seed"], compounds=names, importance=False,
                                show_progress=not quiet)
        now = json.loads(json.dumps(result.to_dict(), default=str))
    checked = compare_figures(doc, now, DEFAULT_TOLERANCE if tolerance is None else tolerance, report=str(path))
    click.echo(format_check(checked, all_figures=not only_differences), nl=False)
    if not checked.ok:
        raise click.exceptions.Exit(1)


# --------------------------------------------------------------------------- learned ranker (issue 6)


def _feature_settings(families, standardise, vector_features, case_citations=None):
    from statinterp.learned.features import FAMILIES, FeatureSettings

    fams = split_methods(families) if families else list(FAMILIES)
    extra = {"case_citations": case_citations} if case_citations else {}
    return FeatureSettings(families=tuple(fams), standardise=standardise,
                           vectors="auto" if vector_features else "off", **extra)


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
    @click.option("--case-citations", "case_citations", type=click.Choice(["eyecite", "regex"]), default=None,
                  help="Where the case-citation features come from: eyecite (full and short case citations, Id., "
                       "supra) or the regular expressions (reporter cites, X v. Y, Id., supra). Default: regex "
                       "(reports/citation_agreement.md).")
    @click.option("--seed", type=int, default=0, show_default=True, help="Seed of pair sampling, trees and folds.")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@click.command()
@data_options
@learned_options
@click.option("--learner", type=click.Choice(["ensemble", "pairwise", "linear", "hgb"]), default="ensemble",
              show_default=True, help="Model: pairwise and hgb z-scored and averaged, a pairwise linear ranker, "
                                      "pointwise ridge, or gradient-boosted trees.")
@click.option("--term", "-t", "terms", multiple=True,
              help="Train only on these terms. The background statistics stay those of"
                   " all of --data (or --background).")
@click.option("--out", "-o", "out", type=OUT_FILE, required=True, help="Model file to write.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def train(families, standardise, vector_features, case_citations, seed, learner, terms, out, force, opts: DataOptions):
    """Fit a learned ranker on every labelled term loaded and save it.

    Use it with `statinterp rank TERM --model FILE` (any corpus, labels not needed) and
    `statinterp evaluate --model FILE` (on terms it was not trained on).

    Example: statinterp train --data ../shared/data/statutory_interpretation --out learned.model
    """
    from statinterp.learned.model import fit_ranker, save_model

    settings = _feature_settings(families, standardise, vector_features, case_citations)
    atomic.check_writable(out, force)
    prepared = prepare(opts, terms=terms or None, require_labels=True)
    note_unlabelled(prepared)
    model = fit_ranker(list(prepared), settings, learner, seed)
    save_model(model, out, force=force, command=invocation())
    n = sum(s.gain is not None for ix in prepared if ix.key in model.trained_on for s in ix.sentences)
    click.echo(f"trained {learner} on {len(model.trained_on)} term(s), {n} labelled sentences, "
               f"{len(model.feature_names)} features; wrote {out}", err=True)
    for what, why in sorted(model.skipped.items()):
        click.echo(f"skipped {what}: {why}", err=True)


@click.command()
@data_options
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
def cv(families, standardise, vector_features, case_citations, seed, learners, mode, n_folds, compounds, terms,
       no_importance, report_dir, no_report, fmt, force, opts: DataOptions):
    """Cross-validate the learned ranker on terms it was not trained on; write reports/learned.md.

    Compares it with Random, TF-ISF-p and the best compound ranker on the same terms, with paired
    tests across terms, per-term results and a feature-importance chart.

    Example: statinterp cv --data ../shared/data/statutory_interpretation
    """
    from statinterp import __version__
    from statinterp.app.report import format_cv, write_report
    from statinterp.learned.crossval import cross_validate
    from statinterp.provenance import run_provenance
    from statinterp.rankers.grammar import paper_compounds

    settings = _feature_settings(families, standardise, vector_features, case_citations)
    names = paper_compounds() if compounds.strip().lower() == "paper" else split_methods([compounds])
    names = [resolve_method(n) for n in names]  # unknown names fail before the corpus is read
    paths = {"md": report_dir / "learned.md", "png": report_dir / "learned_importance.png",
             "json": report_dir / "learned.json"}
    if not no_report:
        for path in paths.values():
            if path.exists() and not force and not path.is_dir():
                raise UsageError(f"{path} already exists; pass --force to overwrite it, or --report-dir DIR to "
                                 "write the report to another folder")
            atomic.check_writable(path, force)
    prepared = prepare(opts, terms=terms or None, require_labels=True)
    note_unlabelled(prepared)
    result = cross_validate(prepared, settings, learners or ("ensemble", "pairwise", "hgb", "linear"), mode, n_folds,
                            seed, compounds=names, importance=not no_importance, show_progress=not opts.quiet)
    command = ["statinterp", "cv", *data_args(opts)]
    for ln in learners:
        command += ["--learner", ln]
    if mode != "loo":
        command += ["--mode", mode, "--folds", str(n_folds)]
    if families:
        command += ["--families", ",".join(split_methods(families))]
    if standardise != "term":
        command += ["--standardise", standardise]
    if not vector_features:
        command += ["--no-vector-features"]
    if "citations" in settings.families:  # always: what the default is may change
        command += ["--case-citations", settings.case_citations]
    if seed:
        command += ["--seed", str(seed)]
    for t in terms:
        command += ["--term", t]
    if report_dir != Path("reports"):
        command += ["--report-dir", str(report_dir)]
    result.metadata = run_provenance(command, version=__version__, seed=seed, data=data_name(opts),
                                     background=background_record(opts, prepared))
    click.echo(format_cv(result, fmt), nl=False)
    if not no_report:
        for path in write_report(result, paths["md"], paths["png"], force=force, json_path=paths["json"]):
            click.echo(f"wrote {path}", err=True)


@click.group()
def model():
    """Model files made by `statinterp train`."""


@model.command("upgrade")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=OUT_FILE)
@click.option("--force", is_flag=True, help="Overwrite NEW if it exists.")
def model_upgrade(old, new, force):
    """Convert OLD, a model file of format 1 (written by statinterp before November 2026), to
    the current format at NEW.

    A format-1 file holds a pickle, and reading a pickle RUNS ANY CODE IT CARRIES: upgrade only a
    file you made yourself or trust as you would a program. (Every other command refuses format-1
    files; files of the current format hold only JSON and arrays and run nothing when read.)
    NEW ranks with exactly the same scores: they are compared, bit for bit, before NEW is written.

    Example: statinterp model upgrade learned.model learned-v2.model
    """
    from statinterp.learned.model import upgrade_model

    atomic.check_writable(new, force)
    upgrade_model(old, new, force=force, command=invocation())
    click.echo(f"wrote {new}", err=True)


#: The commands this module adds to ``statinterp`` (app/cli.py adds those of every *_commands module).
COMMANDS: tuple[click.Command, ...] = (tune, reproduce, train, cv, model,)
