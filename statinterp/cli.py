"""The ``statinterp`` command line: click commands that parse options and call the library."""

from __future__ import annotations

import functools
import sys
import traceback
from pathlib import Path

import click

from . import atomic
from .errors import StatinterpError, UsageError
from .evaluation import parse_metric
from .methods import build_method, list_methods
from .output import RANK_FORMATS, TABLE_FORMATS, format_evaluation, format_ranking
from .provisions import read_provision_file
from .ranking import rank as rank_term
from .vectors import parse_vectors_option, required_pretrained
from .workflow import evaluate_methods, example_data_path, open_corpus, prepare_corpus

DATA_HELP = "A term zip, a folder of TERM-*.json files, or a folder of term zips. Default: the example data."


def _vectors_option(ctx, param, value):
    return parse_vectors_option(value)


def _check_vectors(rankers, opts: dict) -> None:
    """Fail before reading the corpus if a method needs pretrained vectors not given (or unreadable)."""
    for name in required_pretrained(rankers, opts["vectors"]):
        if isinstance(opts["vectors"][name], Path):
            from .embeddings import load_vectors

            opts["vectors"][name] = load_vectors(opts["vectors"][name])


def common_options(func):
    """Options shared by every command that reads data."""

    @click.option("--data", "data", type=click.Path(path_type=Path), default=None, help=DATA_HELP)
    @click.option("--provisions", "provisions", type=click.Path(path_type=Path), default=None,
                  help="Provisions JSON file (default: the shipped data/provisions.json).")
    @click.option("--background", type=click.Path(path_type=Path), default=None,
                  help="More case law whose units join the background statistics (same formats as --data).")
    @click.option("--statistics", type=click.Choice(["background", "candidates"]), default="background",
                  show_default=True,
                  help="Collection statistics from all units of the loaded cases, or (degenerate, for "
                       "comparison) from the candidates' own units only.")
    @click.option("--cache-dir", type=click.Path(path_type=Path), default=None, envvar="STATINTERP_CACHE",
                  help="Analysis cache folder [env STATINTERP_CACHE; default ~/.cache/statinterp].")
    @click.option("--no-cache", is_flag=True, help="Do not read or write the analysis cache.")
    @click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
                  help="Processes for text analysis.")
    @click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
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


def _prepare(opts: dict, terms=None, provision_override=None):
    corpus = open_corpus(opts["data"], provisions=opts["provisions"], terms=terms,
                         provision_override=provision_override)
    background = None
    if opts["background"] is not None:
        background = open_corpus(opts["background"], provisions=opts["provisions"])
    return prepare_corpus(
        corpus,
        cache_dir=False if opts["no_cache"] else opts["cache_dir"],
        statistics=opts["statistics"],
        background=background,
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


def _split_methods(values) -> list[str]:
    out = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
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
@click.option("--method", "-m", default="TF-ISF-p", show_default=True, help="Ranking method (see `statinterp methods`).")
@click.option("--top", "-n", type=click.IntRange(0), default=10, show_default=True, help="How many sentences to show (0 = all).")
@click.option("--format", "fmt", type=click.Choice(RANK_FORMATS), default="table", show_default=True)
@click.option("--provision", "provision_text", default=None, help="Use this text as the term's source provision.")
@click.option("--provision-file", type=click.Path(path_type=Path), default=None, help="Read the provision from this text file.")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def rank(term, method, top, fmt, provision_text, provision_file, out, force, **opts):
    """Rank the sentences that mention TERM.

    Example: statinterp rank vehicle --method BM25-p --top 5
    """
    ranker = build_method(method)
    _check_vectors([ranker], opts)
    if provision_text is not None and provision_file is not None:
        raise UsageError("give --provision or --provision-file, not both")
    override = None
    if provision_file is not None:
        provision_text = read_provision_file(provision_file)
    if provision_text is not None:
        if not provision_text.strip():
            raise UsageError("--provision is empty")
        override = {term: provision_text}
    if out is not None:
        atomic.check_writable(out, force)
    prepared = _prepare(opts, provision_override=override)
    index = prepared[term]
    ranking = rank_term(ranker, index)
    _emit(format_ranking(ranking, fmt, top or None), out, force)


@cli.command()
@common_options
@click.option("--method", "-m", "methods", multiple=True,
              help="Method(s) to evaluate; repeat or comma-separate. Default: Random, TF-ISF, BM25, QLLM with -c/-o/-p.")
@click.option("--k", "ks", type=click.IntRange(1), multiple=True, help="NDCG cutoffs (default 10 and 100).")
@click.option("--term", "-t", "terms", multiple=True, help="Evaluate only these terms.")
@click.option("--format", "fmt", type=click.Choice(TABLE_FORMATS), default="table", show_default=True)
@click.option("--macro-only", is_flag=True, help="Table format: only the macro averages.")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None, help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def evaluate(methods, ks, terms, fmt, macro_only, out, force, **opts):
    """Per-term and macro NDCG of ranking methods on labelled data.

    Example: statinterp evaluate --data ../shared/data/statutory_interpretation -m TF-ISF-p -m BM25
    """
    names = _split_methods(methods) or default_methods()
    rankers = [build_method(n) for n in names]
    _check_vectors(rankers, opts)
    metrics = [parse_metric(f"nDCG@{k}") for k in (ks or (10, 100))]
    if out is not None:
        atomic.check_writable(out, force)
    prepared = _prepare(opts, terms=terms or None)
    if not any(ix.term.labelled for ix in prepared):
        raise UsageError("no loaded term has labelled sentences: nothing to evaluate (rank works on unlabelled data)")
    results = evaluate_methods(prepared, rankers, metrics, show_progress=not opts["quiet"])
    _emit(format_evaluation(results, fmt, per_term=not macro_only), out, force)


def default_methods() -> list[str]:
    return ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")]


@cli.command()
def methods():
    """List the ranking methods, one line each."""
    entries = list_methods()
    width = max(len(n) for n, _ in entries)
    for name, desc in entries:
        click.echo(f"{name:<{width}}  {desc}")


@cli.command()
def example():
    """Print where the example data lives (the default --data)."""
    click.echo(str(example_data_path()))


def main(argv=None) -> int:
    """Console entry point: clear one-line errors, exit status 2 for bad input or usage."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="statinterp", standalone_mode=False, obj={})
        return 0
    except click.exceptions.Abort:
        click.echo("statinterp: interrupted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except StatinterpError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"statinterp: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("statinterp: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
