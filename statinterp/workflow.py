"""The library's top-level operations: load -> prepare -> rank -> evaluate, and find in a collection.

The top layer of the library (docs/architecture.md, "Layers"): it joins the layers below it
(the collection's find and the evaluation's comparison, the corpus and its preparation) and
re-exports the evaluation step (:func:`~statinterp.evaluation.ranking.evaluate_methods`).

The CLI calls these and nothing else; Python users can call them too::

    from statinterp import open_corpus, prepare_corpus, build_method, rank, evaluate_methods
    corpus = open_corpus("data/example")
    prepared = prepare_corpus(corpus)
    ranking = rank(build_method("TF-ISF-p"), prepared["vehicle"])
    table = evaluate_methods(prepared, ["Random", "TF-ISF-p"])
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from statinterp.corpus.authority import CaseFilter
from statinterp.corpus.dataset import Corpus, load_corpus, term_key
from statinterp.corpus.provisions import ProvisionBook, load_provisions
from statinterp.evaluation.against import AgainstResult, compare_with_labelled
from statinterp.evaluation.ranking import MethodResult, evaluate_methods, prefetch_vectors
from statinterp.index.term_index import PreparedCorpus, prepare
from statinterp.progress import task
from statinterp.text.analysis import Analyzer
from statinterp.vectors.provider import VectorProvider

__all__ = ["MethodResult", "attach_vectors", "evaluate_methods", "example_data_path", "find_and_compare",
           "find_in_collection", "open_corpus", "prefetch_vectors", "prepare_corpus", "prepare_found",
           "restrict_terms"]


def example_data_path() -> Path:
    """The invented example corpus shipped with statinterp (term ``vehicle``)."""
    return Path(str(resources.files("statinterp.data").joinpath("example")))


def open_corpus(
    data: str | Path | None = None,
    *,
    provisions: str | Path | ProvisionBook | None = None,
    terms: Iterable[str] | None = None,
    provision_override: Mapping[str, str | tuple[str, str]] | None = None,
) -> Corpus:
    """Load a corpus (default: the example data) with the provisions attached.

    ``provisions`` is a provisions file or book (default: the shipped one);
    ``provision_override`` maps term names to provision texts (or (text, citation) pairs) that replace it.
    """
    book = provisions if isinstance(provisions, ProvisionBook) else load_provisions(provisions)
    for name, given in (provision_override or {}).items():
        text, citation = given if isinstance(given, tuple) else (given, "user-supplied")
        book = book.with_override(term_key(name), text, citation)
    return load_corpus(data if data is not None else example_data_path(), book, terms=terms)


def prepare_corpus(
    corpus: Corpus,
    *,
    cache_dir: str | Path | None | bool = None,
    statistics: str = "background",
    background: Corpus | None = None,
    background_only: bool = False,
    terms: Iterable[str] | None = None,
    n_process: int | None = None,
    show_progress: bool = False,
    analyzer: Analyzer | None = None,
    vectors: Mapping[str, Any] | None = None,
    vector_workers: int | None = None,
    vector_settings: Mapping[str, Any] | None = None,
) -> PreparedCorpus:
    """Analyse the corpus (using the cache) and build the per-term indices.

    The background collection (the units whose statistics N, df, lengths and collection model
    the scores use) is every case of ``corpus``, plus the cases of ``background`` if given;
    with ``background_only=True`` it is the cases of ``background`` alone (a fixed collection,
    so that adding terms to the corpus changes no figure). ``terms`` restricts the terms
    *scored* (the indices kept), never the background or the domain vectors: a term's figures
    are the same whether it is scored alone or with the others.

    Word vectors for the embedding methods are attached too (:func:`attach_vectors`); nothing
    is trained or loaded until a method uses them. ``vectors`` maps pretrained names (``w2vec``,
    ``GloVe``, ``fastt``) to files; ``vector_workers`` > 1 trains domain vectors faster but not
    reproducibly; ``vector_settings`` maps ``word2vec``/``fasttext`` to training settings.
    ``n_process=None`` lets the :class:`~statinterp.text.analysis.Analyzer` choose how many processes
    analyse the texts (two on a multi-core machine when there is much to analyse).
    """
    analyzer = analyzer or Analyzer(cache_dir=cache_dir, n_process=n_process)
    total = sum(len(c.text) for t in corpus for c in t.cases.values())
    if background is not None:
        total += sum(len(c.text) for t in background for c in t.cases.values())
    with task(total, "Analysing case texts", show_progress and total > 2_000_000, unit="chars") as advance:
        prepared = prepare(corpus, analyzer, statistics=statistics, extra_background=background,
                           background_only=background_only, progress=advance)
    attach_vectors(prepared, cache_dir=cache_dir, pretrained=vectors, workers=vector_workers,
                   settings=vector_settings, show_progress=show_progress)
    if terms is not None:
        restrict_terms(prepared, terms)
    return prepared


def restrict_terms(prepared: PreparedCorpus, terms: Iterable[str]) -> PreparedCorpus:
    """Keep only the indices of ``terms`` (names or keys; an unknown one is a UsageError naming the
    loaded terms), in ``prepared``'s order. The background statistics and the word vectors stay
    those of everything loaded."""
    wanted = {prepared[name].key for name in terms}  # prepared[name] raises for an unknown term
    prepared.indices = {key: ix for key, ix in prepared.indices.items() if key in wanted}
    return prepared


def attach_vectors(
    prepared: PreparedCorpus,
    *,
    cache_dir: str | Path | None | bool = None,
    pretrained: Mapping[str, Any] | None = None,
    workers: int | None = None,
    settings: Mapping[str, Any] | None = None,
    show_progress: bool = False,
) -> VectorProvider:
    """Attach a :class:`~statinterp.vectors.provider.VectorProvider` to ``prepared`` and each of its term
    indices (``index.vectors``); domain vectors are trained on the corpus's case texts (or read
    from the cache under ``cache_dir``) when first used. Returns the provider."""
    provider = VectorProvider(prepared, cache_dir=cache_dir, settings=settings, workers=workers,
                              pretrained=pretrained, show_progress=show_progress)
    prepared.vectors = provider  # type: ignore[attr-defined]
    for index in prepared:
        index.vectors = provider
    return provider


def find_in_collection(collection: str | Path, term: str, *, provisions: str | Path | ProvisionBook | None = None,
                       provision_text: str | None = None, show_progress: bool = False, engine: str = "local",
                       scheduler: str | None = None, n_workers: int = 2, shards: Sequence[str] | None = None,
                       case_filter: CaseFilter | None = None, provision_citation: str | None = None,
                       strict: bool = False, headings: bool = False):
    """Find ``term`` in a collection folder (a single file or a set of shards): ``(FoundTerm,
    Corpus)``, the corpus holding the found candidates as one unlabelled term with its provision
    (``provision_text``, else the provisions book's entry for the term, else none). ``engine``,
    ``scheduler``, ``n_workers``: as :func:`~statinterp.collection.find.find_term`; ``shards``:
    ``KEY=VALUE`` selections of a shard set's shards to search
    (:func:`~statinterp.collection.shards.open_collection`); ``case_filter``: only the sentences
    of the cases it keeps (``--court``, ``--jurisdiction``, ``--level``, ``--since``, ``--until``,
    ``--published-only``: applied in the store before the full-text lookup), recorded in
    ``FoundTerm.filters``. A collection an ingest into did not finish is named in a warning, or
    with ``strict`` refused (:func:`~statinterp.collection.shards.check_finished`). A heading line
    is no candidate sentence unless ``headings`` (:func:`~statinterp.collection.find.find_term`)."""
    from statinterp.collection.find import find_term
    from statinterp.collection.shards import check_finished, open_collection
    from statinterp.collection.store import damage_named

    if not any(ch.isalnum() for ch in term):
        from statinterp.errors import UsageError

        raise UsageError(f"TERM {term!r} holds no letter or digit: there is nothing to find")
    book = provisions if isinstance(provisions, ProvisionBook) else load_provisions(provisions)
    key = term_key(term)
    if provision_text is not None:  # its citation: provision_citation (--provision-cite), else "user-supplied"
        book = book.with_override(key, provision_text, provision_citation or "user-supplied")
    with damage_named(collection), open_collection(collection, shards, case_filter=case_filter) as store:
        check_finished(store, strict)
        found = find_term(store, term, engine=engine, scheduler=scheduler, n_workers=n_workers, headings=headings)
    if case_filter:
        found.filters = case_filter.as_dict()
    corpus = Corpus()
    if found.tables["sentence"]:
        corpus.terms[key] = found.term_data(book.get(key))
    return found, corpus


def prepare_found(collection: str | Path, corpus: Corpus, *, shards: Sequence[str] | None = None,
                  shard_statistics: str = "all", **prepare_options: Any) -> PreparedCorpus:
    """:func:`prepare_corpus` of found candidates, scored with the collection's background
    statistics (every unit of every stored case) instead of the loaded cases'. In a set of
    shards: the sums over every shard (``shard_statistics="all"``), or over the shards that
    ``shards`` selects (``"selected"``)."""
    from statinterp.collection.find import use_collection_statistics
    from statinterp.collection.shards import open_collection
    from statinterp.collection.store import damage_named

    prepared = prepare_corpus(corpus, statistics="background", **prepare_options)
    with damage_named(collection), open_collection(collection, shards, shard_statistics) as store:
        use_collection_statistics(prepared, store)
    return prepared


def find_and_compare(collection, labelled) -> tuple[list[AgainstResult], Corpus, dict[str, float]]:
    """Find every term of the labelled corpus ``labelled`` in ``collection`` (a folder or an open
    :class:`~statinterp.collection.store.Collection` or
    :class:`~statinterp.collection.shards.ShardSet`) and compare
    (:func:`~statinterp.evaluation.against.compare_with_labelled`: ``statinterp find --against``).

    Returns the per-term results, the found candidates as a corpus with the labels carried over
    (and each term's provision), and the seconds each find took.
    """
    from statinterp.collection.find import find_term
    from statinterp.collection.shards import ShardSet, open_collection
    from statinterp.collection.store import Collection

    results: list[AgainstResult] = []
    found_corpus = Corpus()
    seconds: dict[str, float] = {}
    for term in labelled:
        started = time.perf_counter()
        if isinstance(collection, Collection | ShardSet):
            found = find_term(collection, term.query)
        else:
            with open_collection(collection) as store:
                found = find_term(store, term.query)
        seconds[term.key] = time.perf_counter() - started
        found_term = found.term_data(term.provision)
        result = compare_with_labelled(found_term, term)
        found_term.sentences = [replace(s, label=result.labels.get(s.id)) for s in found_term.sentences]
        found_corpus.terms[term.key] = found_term
        results.append(result)
    return results, found_corpus, seconds
