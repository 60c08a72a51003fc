"""Features of each candidate sentence for the learned ranker.

:func:`extract_features` turns one :class:`~statinterp.index.term_index.TermIndex` into a matrix
``X`` (n_candidates, n_features) with a name and a family per column. It reads only the
term's own data (texts, tokens, provision, unsupervised scores), never its labels, so the
same function serves training and ranking of new, unlabelled terms.

Families (each switchable in :class:`FeatureSettings`):

``scores``
    Every unsupervised lexical score: TF-ISF, BM25, QLLM on the sentence and with each
    context (``-p``, ``-o``, ``-c``, ``-r``), the provision expansion of the sentence's case
    (``-g``), the novelty measures NW and NWR, and the paper's gates: ``Tg`` (0/1), the
    domain score of the case relative to the gate's scale ((Sim-g − o) / (Avg10 − o)) and
    ``Nr`` (0/1).
``vectors``
    The same with domain word vectors (``w2vec*`` with each context, ``TF-ISF-e``,
    ``w2vec*-g``, WMD novelty); skipped, with the reason recorded, when no vectors are
    available.
``neighbours``
    The base similarities (and NWR) of the ±1 and ±2 neighbouring sentences
    (``index.neighbours[d]``; a missing neighbour gets the term's lowest value and a
    ``present`` flag 0) and of the sentence's paragraph.
``quotes``
    Number of quoted spans, quoted share of the sentence, whether the term is quoted, and
    the overlap with the provision: the longest run of tokens shared by the provision and a
    quoted span (or the whole sentence), divided by the provision's length, by the
    sentence's length, and in tokens.
``citations``
    Whether the sentence (and its paragraph) cites the source provision (its section number
    after ``§``/``section``, ``1839(3)``-style, or ``18 U.S.C. § 1839``, parsed from
    ``term.provision.citation``), any statute, or a case; citation share of the sentence.
    The case columns (``case``, ``par_case``, ``case_cite_share``) come from eyecite
    (:mod:`statinterp.text.citations`: full and short case citations, ``Id.``, ``supra``) or
    from the regular expressions of :mod:`.sentence_patterns` (reporter cites, "X v. Y", Id.,
    supra, infra), as :attr:`FeatureSettings.case_citations` says; the statute and provision
    columns always use the regular expressions (they also catch "the Act", "section 12" without
    a full citation: ``reports/citation_agreement.md``).
``cues``
    Definitional and explanatory patterns ("means", "is defined as", "refers to",
    "includes", "such as", "for example", "test", "factors", "whether", negation, "in
    determining", ...), the term in a copular construction ("X is/are/means ..."),
    attribution cues (argues, contends, asserts, claims, according to, a party as subject),
    headings and citation-only sentences.
``structure``
    Sentence length, relative position in its paragraph and of the paragraph in the opinion,
    opinion type (majority, concurrence, dissent, other), how often the case mentions the
    term, how many candidates the case and paragraph hold, the term's occurrences in the
    sentence, the share of the term's words present and their proximity (term length /
    minimal window holding all of them), near-copies among the term's candidates, court level.

``dense`` (optional: the ``neural`` extra, see :mod:`.dense`)
    Sentence embeddings (all-MiniLM-L6-v2): cosine of the sentence (and of its paragraph) with
    the term, the provision and the provision's clause holding the term (term in provision);
    sentence-paragraph cosine; mean and largest cosine with the term's other candidates; cosine
    with a few fixed prototype sentences (definition, example, application, argument, citation,
    ...); optionally (``dense_dims``) the first coordinates of the embedding in a fixed random
    orthonormal basis (per-term z-scored, so what is left is how the sentence differs from the
    term's other candidates).

The text patterns the ``quotes``, ``citations`` and ``cues`` families look for live in
:mod:`.sentence_patterns`; this module turns them into columns.

Per-term standardisation (``standardise``): unsupervised scores are not comparable across
terms (their scale depends on the term's query and statistics), so the columns of the
``scores``, ``vectors``, ``neighbours`` and ``dense`` families are turned into per-term z-scores
(``"term"``), kept raw (``"none"``), or given raw plus per-term z-score and percentile rank
(``"both"``). The other families are kept as they are. Only the term's own candidates enter
the per-term statistics.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from statinterp.errors import StatinterpError, UsageError
from statinterp.learned.sentence_patterns import (
    case_citation_share,
    cites_case,
    cites_provision,
    cites_statute,
    count_phrase,
    cue_flags,
    longest_common_run,
    minimal_window,
    quoted_spans,
    simple_tokens,
    term_pattern,
)

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

__all__ = ["ALL_FAMILIES", "FAMILIES", "OPTIONAL_FAMILIES", "FeatureMatrix", "FeatureSettings", "default_score_methods",
           "default_vector_methods", "extract_features"]

#: Feature families and what they hold.
FAMILIES = {
    "scores": "unsupervised lexical scores: TF-ISF/BM25/QLLM with every context, -g expansion, NW, NWR, gates",
    "vectors": "scores that need domain word vectors: w2vec* with every context, -e expansion, WMD",
    "neighbours": "base similarities of the +-1, +-2 neighbouring sentences and of the paragraph",
    "quotes": "quoted spans, quoted share, longest token run shared with the provision",
    "citations": "citations of the source provision, of any statute, of cases (sentence and paragraph)",
    "cues": "definitional/explanatory/attribution patterns, copular use of the term, headings, citation-only",
    "structure": "length, position, opinion type, term mentions in the case, term-word proximity, copies",
}
#: Families that need an optional extra (``pip install 'statinterp[neural]'``).
OPTIONAL_FAMILIES = {
    "dense": "sentence embeddings (all-MiniLM-L6-v2): cosines with the term, the provision, the term's clause, "
             "the paragraph, the other candidates and prototype sentences",
}
ALL_FAMILIES = {**FAMILIES, **OPTIONAL_FAMILIES}
#: Families whose columns are unsupervised scores (standardised per term).
SCORE_FAMILIES = ("scores", "vectors", "neighbours", "dense")
DEFAULT_FAMILIES = tuple(FAMILIES)
#: Aliases accepted in ``families``: ``default`` (the families above) and ``all`` (with the optional ones).
FAMILY_ALIASES = {"default": DEFAULT_FAMILIES, "all": tuple(ALL_FAMILIES)}



def _feature_methods(vectors: bool) -> tuple[str, ...]:
    """The registered parts' feature methods (:func:`statinterp.rankers.registry.feature_methods`)
    that need word vectors (``vectors``) or that do not."""
    from statinterp.rankers.grammar import parse
    from statinterp.rankers.registry import feature_methods

    return tuple(m for m in feature_methods() if bool(parse(m).requires().vectors) == vectors)


def default_score_methods() -> tuple[str, ...]:
    """The ``scores`` family's methods: every registered scorer's declared features without word
    vectors (TF-ISF, BM25, QLLM alone and with -p, -o, -c, -r; their -g; NW, NWR)."""
    return _feature_methods(vectors=False)


def default_vector_methods() -> tuple[str, ...]:
    """The ``vectors`` family's methods: the declared features that need word vectors (w2vec*
    alone and with -p, -o, -c, -r; TF-ISF-e, w2vec*-g; WMD)."""
    return _feature_methods(vectors=True)


def neighbour_similarities(with_vectors: bool) -> list:
    """The similarities the ``neighbours`` family scores the neighbouring sentences and the
    paragraph with: every registered scorer that declares itself (alone) a feature, those
    without word vectors first (TF-ISF, BM25, QLLM), then, ``with_vectors``, the others (w2vec*)."""
    from statinterp.rankers import registry

    sims = [p.build() for p in registry.entries("scorer") if "" in p.features]
    return [s for s in sims if not s.requires().vectors] + ([s for s in sims if s.requires().vectors]
                                                            if with_vectors else [])

STANDARDISE = ("term", "none", "both")
#: Where the case-citation columns come from (``reports/citation_agreement.md``).
CASE_CITATIONS = {
    "eyecite": "eyecite's full and short case citations, Id. and supra (statinterp.text.citations)",
    "regex": "the regular expressions of statinterp.learned.sentence_patterns (reporter cites, X v. Y, Id., supra)",
}
#: What a model saved before the setting existed was trained with.
LEGACY_CASE_CITATIONS = "regex"


@dataclass
class FeatureSettings:
    """Which features to compute. Stored with a trained model so ranking computes the same ones."""

    families: tuple[str, ...] = DEFAULT_FAMILIES
    score_methods: tuple[str, ...] = field(default_factory=default_score_methods)
    vector_methods: tuple[str, ...] = field(default_factory=default_vector_methods)
    neighbour_offsets: tuple[int, ...] = (-2, -1, 1, 2)
    standardise: str = "term"
    #: "auto": use word vectors when the index can provide them; "off": never.
    vectors: str = "auto"
    #: Sentence encoder of the ``dense`` family (:mod:`.dense`).
    dense_model: str = "all-MiniLM-L6-v2"
    #: Embedding coordinates (in a fixed random orthonormal basis) added as features; 0: none.
    dense_dims: int = 0
    #: Source of the case-citation columns of the ``citations`` family (:data:`CASE_CITATIONS`).
    case_citations: str = "regex"

    def __post_init__(self):
        fams: list[str] = []
        for f in self.families:
            fams += FAMILY_ALIASES.get(f, (f,))
        self.families = tuple(dict.fromkeys(fams))
        unknown = [f for f in self.families if f not in ALL_FAMILIES]
        if unknown:
            raise UsageError(f"unknown feature famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
                             f"valid: {', '.join(ALL_FAMILIES)} (or default, all)")
        self.dense_dims = int(self.dense_dims)
        if self.dense_dims < 0:
            raise UsageError(f"dense_dims must be >= 0, not {self.dense_dims}")
        if "dense" in self.families:
            from statinterp.learned.dense import dense_available

            ok, why = dense_available(self.dense_model)
            if not ok:
                raise UsageError(why)
        if self.standardise not in STANDARDISE:
            raise UsageError(f"standardise must be one of {', '.join(STANDARDISE)}, not {self.standardise!r}")
        if self.vectors not in ("auto", "off"):
            raise UsageError(f"vectors must be 'auto' or 'off', not {self.vectors!r}")
        if self.case_citations not in CASE_CITATIONS:
            raise UsageError(f"case_citations must be one of {', '.join(CASE_CITATIONS)}, "
                             f"not {self.case_citations!r}")
        self.score_methods = tuple(self.score_methods)
        self.vector_methods = tuple(self.vector_methods)
        self.neighbour_offsets = tuple(int(d) for d in self.neighbour_offsets)

    def __setstate__(self, state: dict) -> None:
        """Unpickling (a saved model's settings): a model saved before a setting existed was
        trained without it; for ``case_citations`` that is :data:`LEGACY_CASE_CITATIONS`, not
        today's default, so its columns are computed as when it was trained."""
        self.__dict__.update({"case_citations": LEGACY_CASE_CITATIONS, **state})

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSettings:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def without(self, *families: str) -> FeatureSettings:
        d = self.to_dict()
        d["families"] = [f for f in self.families if f not in families]
        return FeatureSettings.from_dict(d)


@dataclass
class FeatureMatrix:
    """Features of one term's candidates: ``X[i, j]`` is feature ``names[j]`` of candidate ``i``."""

    X: np.ndarray
    names: list[str]
    families: list[str]
    #: Feature groups that could not be computed (filled with 0) -> reason.
    skipped: dict[str, str] = field(default_factory=dict)

    def column(self, name: str) -> np.ndarray:
        return self.X[:, self.names.index(name)]

    def select(self, names: Sequence[str]) -> FeatureMatrix:
        """The columns ``names`` in that order; absent ones are 0 (and recorded in ``skipped``)."""
        pos = {n: j for j, n in enumerate(self.names)}
        X = np.zeros((self.X.shape[0], len(names)))
        fam = []
        skipped = dict(self.skipped)
        for j, n in enumerate(names):
            if n in pos:
                X[:, j] = self.X[:, pos[n]]
                fam.append(self.families[pos[n]])
            else:
                fam.append(n.split(":", 1)[0])
                skipped.setdefault(n, "not computed for this term (filled with 0)")
        return FeatureMatrix(X, list(names), fam, skipped)


# ============================================================================ extraction


class _Builder:
    def __init__(self, n: int):
        self.n = n
        self.cols: list[np.ndarray] = []
        self.names: list[str] = []
        self.families: list[str] = []
        self.skipped: dict[str, str] = {}

    def add(self, family: str, name: str, values) -> None:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if v.shape != (self.n,):
            raise RuntimeError(f"feature {name}: {v.shape} values for {self.n} candidates")
        v = np.where(np.isfinite(v), v, 0.0)
        self.cols.append(v)
        self.names.append(f"{family}:{name}" if not name.startswith(family + ":") else name)
        self.families.append(family)


def zscore(v: np.ndarray) -> np.ndarray:
    """``(v - mean) / sd`` over one term's candidates (all zeros when ``v`` is constant)."""
    v = np.asarray(v, dtype=np.float64)
    sd = v.std()
    return (v - v.mean()) / sd if sd > 1e-12 else np.zeros_like(v)


def _percentile(v: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    if len(v) <= 1:
        return np.full(len(v), 0.5)
    return (rankdata(v, method="average") - 1.0) / (len(v) - 1.0)


def vectors_available(index: TermIndex, settings: FeatureSettings) -> tuple[bool, str]:
    """Whether the vector family can be computed for ``index`` (and why not)."""
    if settings.vectors == "off":
        return False, "word vectors switched off (vectors='off')"
    provider = getattr(index, "vectors", None)
    if provider is None:
        return False, "no word vectors attached to the index"
    try:
        if provider.get("word2vec") is None:
            return False, "domain word2vec vectors not available"
    except StatinterpError as exc:
        return False, f"domain word2vec vectors not available: {exc}"
    return True, ""


def _method_scores(b: _Builder, family: str, methods: Sequence[str], index: TermIndex) -> None:
    from statinterp.rankers.grammar import parse

    for name in methods:  # the settings hold method names (the feature names); parsed to objects here
        try:
            values = parse(name).score(index)
        except StatinterpError as exc:
            b.skipped[f"{family}:{name}"] = str(exc)
            continue
        b.add(family, name, values)


def _provision_and_centrality(b: _Builder, index: TermIndex) -> None:
    """Sentence-level similarity to the provision (TF-ISF, BM25 with the provision as query) and
    centrality: mean TF-ISF-weighted cosine of the sentence to the term's other candidates."""
    from statinterp.rankers.lexical import BM25, TFISF

    units = index.levels["sentence"]
    stats = index.background["sentence"]
    if index.provision is not None and len(index.provision):
        for sim in (TFISF(), BM25()):
            raw = sim.score_units(index.provision, units.seqs, stats, index)
            b.add("scores", f"provision:{sim.name}", units.spread(np.asarray(raw, dtype=np.float64)))
    else:
        b.skipped["scores:provision similarity"] = "the term has no source provision"
    M = units.seqs.matrix(len(index.vocab)).tocsr()
    if M.shape[0] > 1 and M.nnz:
        # the columns in the order of their words, not of their vocabulary ids (which depend on what
        # else was loaded): the sparse products add their terms in column order
        present = np.unique(M.indices)
        words = index.vocab.words
        present = present[np.argsort(np.asarray([words[i] for i in present], dtype=object), kind="stable")]
        M = M[:, present].tocsr()
        M.sort_indices()
        df = np.asarray(stats.df_of(present.astype(np.int64)), dtype=np.float64)
        idf = np.log((stats.n_units + 1.0) / (0.5 + df))
        M.data = np.log1p(M.data)
        M = M.multiply(idf[None, :]).tocsr()
        norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        from scipy.sparse import diags

        M = diags(1.0 / norms) @ M
        sims = np.asarray((M @ M.T).todense())
        np.fill_diagonal(sims, 0.0)
        central = sims.sum(axis=1) / (M.shape[0] - 1)
    else:
        central = np.zeros(M.shape[0])
    b.add("scores", "centrality", units.spread(central))


def _gate_features(b: _Builder, index: TermIndex) -> None:
    from statinterp.rankers.gates import DomainGate, NoveltyGate, top_mean

    try:
        gate = DomainGate()
        cases = gate.case_scores(index)
        origin = min(0.0, float(cases.min())) if len(cases) else 0.0
        scale = top_mean(cases) - origin if len(cases) else 0.0
        case_of = index.levels["case"].spread(cases, missing=origin)
        b.add("scores", "gate:Tg", gate.passes(index).astype(float))
        b.add("scores", "gate:Tg_ratio", (case_of - origin) / scale if scale > 0 else np.zeros(len(index)))
        b.add("scores", "gate:Nr", NoveltyGate("NWR", 0.2).passes(index).astype(float))
    except StatinterpError as exc:
        b.skipped["scores:gates"] = str(exc)


def _neighbour_features(b: _Builder, index: TermIndex, settings: FeatureSettings, with_vectors: bool) -> None:
    from statinterp.rankers.novelty import new_words

    sims = neighbour_similarities(with_vectors)
    stats = index.background["sentence"]
    for d in settings.neighbour_offsets:
        units = index.neighbours.get(d)
        if units is None:
            continue
        present = units.present
        b.add("neighbours", f"nb{d:+d}:present", present.astype(float))
        for sim in sims:
            name = sim.name
            try:
                raw = sim.score_units(index.query, units.seqs, stats, index)
            except StatinterpError as exc:
                b.skipped[f"neighbours:nb{d:+d}:{name}"] = str(exc)
                continue
            v = units.spread(np.asarray(raw, dtype=np.float64), missing=np.nan)
            floor = np.nanmin(v) if np.isfinite(v).any() else 0.0
            b.add("neighbours", f"nb{d:+d}:{name}", np.where(np.isnan(v), floor, v))
        if index.provision is not None and len(index.provision):
            new, distinct = new_words(units.seqs, index.provision.ids)
            nwr = np.divide(new, distinct, out=np.zeros_like(new), where=distinct > 0)
            b.add("neighbours", f"nb{d:+d}:NWR", units.spread(nwr, missing=0.0))
    par = index.levels["paragraph"]
    for sim in sims:
        name = sim.name
        try:
            raw = sim.score_units(index.query, par.seqs, index.background["paragraph"], index)
        except StatinterpError as exc:
            b.skipped[f"neighbours:par:{name}"] = str(exc)
            continue
        b.add("neighbours", f"par:{name}", par.spread(np.asarray(raw, dtype=np.float64)))


def _quote_features(b: _Builder, index: TermIndex, term_re: re.Pattern) -> None:
    provision = index.term.provision
    prov = simple_tokens(provision.text) if provision is not None else []
    names = ("n_quotes", "quoted_share", "term_quoted", "prov_run_sentence", "prov_run_quote",
             "prov_run_tokens", "prov_run_of_sentence", "starts_quoted")
    rows: dict[str, list[float]] = {k: [] for k in names}
    for s in index.sentences:
        text = s.text
        spans = quoted_spans(text)
        quoted = sum(e - a for a, e in spans)
        words = simple_tokens(text)
        rows["n_quotes"].append(len(spans))
        rows["quoted_share"].append(min(1.0, quoted / max(1, len(text.strip()))))
        rows["term_quoted"].append(float(any(term_re.search(text[a:e]) for a, e in spans)))
        rows["starts_quoted"].append(float(bool(re.match(r"^\W*[\"“”]", text))))
        run_s = longest_common_run(words, prov) if prov else 0
        run_q = max((longest_common_run(simple_tokens(text[a:e]), prov) for a, e in spans), default=0) if prov else 0
        rows["prov_run_sentence"].append(run_s / len(prov) if prov else 0.0)
        rows["prov_run_quote"].append(run_q / len(prov) if prov else 0.0)
        rows["prov_run_tokens"].append(math.log1p(run_s))
        rows["prov_run_of_sentence"].append(run_s / max(1, len(words)))
    if not prov:
        b.skipped["quotes:provision overlap"] = "the term has no source provision (overlap features are 0)"
    for k, v in rows.items():
        b.add("quotes", k, v)


def _citation_features(b: _Builder, index: TermIndex, settings: FeatureSettings) -> None:
    citation = index.term.provision.citation if index.term.provision is not None else ""
    par_cache: dict[str, tuple] = {}
    if settings.case_citations == "eyecite":
        from statinterp.text import citations

        cites_a_case, case_share = citations.cites_case, citations.case_citation_share
    else:
        cites_a_case, case_share = cites_case, case_citation_share

    def analyse(text: str) -> tuple[float, float, float, float]:
        sec, full = cites_provision(text, citation) if citation else (False, False)
        return float(sec), float(full), float(cites_statute(text)), float(cites_a_case(text))

    rows: list[tuple[float, ...]] = []
    for s in index.sentences:
        own = analyse(s.text)
        if s.paragraph_id not in par_cache:
            par_cache[s.paragraph_id] = analyse(index.term.paragraphs[s.paragraph_id].text)
        par = par_cache[s.paragraph_id]
        rows.append(own + par + (case_share(s.text),))
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(index), 9)
    names = ["source_section", "source_full", "statute", "case", "par_source_section", "par_source_full",
             "par_statute", "par_case", "case_cite_share"]
    if not citation:
        b.skipped["citations:source provision"] = "the term has no provision citation (source features are 0)"
    for j, n in enumerate(names):
        b.add("citations", n, matrix[:, j])


def _cue_features(b: _Builder, index: TermIndex, term_re: re.Pattern) -> None:
    flags = [cue_flags(s.text, term_re) for s in index.sentences]
    keys = list(cue_flags("x", term_re))
    for k in keys:
        b.add("cues", k, [f[k] for f in flags])
    par_flags: dict[str, dict] = {}
    for s in index.sentences:
        if s.paragraph_id not in par_flags:
            par_flags[s.paragraph_id] = cue_flags(index.term.paragraphs[s.paragraph_id].text, term_re)
    for k in ("cue:n_cues", "cue:means", "cue:defined", "cue:copular_term", "cue:term_predicate", "cue:attribution"):
        b.add("cues", "par_" + k.split(":", 1)[1], [par_flags[s.paragraph_id][k] for s in index.sentences])


_COURTS = (("supreme_us", r"supreme court of the united states"), ("appeals_us", r"united states court of appeals"),
           ("district_us", r"united states district court|bankruptcy|court of (?:federal )?claims|tax court"),
           ("state", r"^(?!.*united states).*"))


def _structure_features(b: _Builder, index: TermIndex, term_re: re.Pattern) -> None:
    from statinterp.evaluation.ranking import near_duplicate_counts

    term = index.term
    sent = index.levels["sentence"]
    qids = [index.vocab.get(t) for t in index.query.tokens]
    phrase = np.asarray(qids, dtype=np.int64) if qids and all(q is not None for q in qids) else np.zeros(0, np.int64)
    wanted = np.asarray([q for q in qids if q is not None], dtype=np.int64)
    n_wanted = len(set(qids)) if qids else 0
    lengths, pos_par, pos_op, occ, coverage, proximity = [], [], [], [], [], []
    for i, s in enumerate(index.sentences):
        seq = sent.seqs.row(int(sent.row[i]))
        lengths.append(len(seq))
        ptext = term.paragraphs[s.paragraph_id].text
        off = ptext.find(s.text)
        pos_par.append(off / max(1, len(ptext) - len(s.text)) if off >= 0 and len(ptext) > len(s.text) else 0.0)
        otext = term.opinions[s.opinion_id].text
        poff = otext.find(ptext)
        pos_op.append(poff / max(1, len(otext)) if poff >= 0 else 0.5)
        k = count_phrase(seq, phrase) if len(phrase) else 0
        occ.append(max(k, len(term_re.findall(s.text))))
        present = len(set(seq.tolist()) & set(wanted.tolist())) if len(wanted) else 0
        coverage.append(present / n_wanted if n_wanted else 0.0)
        w = minimal_window(seq, wanted) if len(wanted) and present == len(set(wanted.tolist())) else 0
        proximity.append(len(set(wanted.tolist())) / w if w else 0.0)
    b.add("structure", "length", np.log1p(lengths))
    b.add("structure", "length_raw", lengths)
    b.add("structure", "pos_in_paragraph", pos_par)
    b.add("structure", "pos_in_opinion", pos_op)
    b.add("structure", "term_occurrences", occ)
    b.add("structure", "term_word_coverage", coverage)
    b.add("structure", "term_proximity", proximity)
    types = [term.opinions[s.opinion_id].type.lower() for s in index.sentences]
    for t in ("majority", "concurrence", "dissent"):
        b.add("structure", f"opinion_{t}", [float(t in x) for x in types])
    b.add("structure", "opinion_other", [float(not any(t in x for t in ("majority", "concurrence", "dissent")))
                                         for x in types])
    # how often each case mentions the term (in its whole text), and candidates per case / paragraph
    cases = index.levels["case"]
    mentions = np.zeros(len(cases.labels))
    for r, cid in enumerate(cases.labels):
        seq = cases.seqs.row(r)
        mentions[r] = count_phrase(seq, phrase) if len(phrase) else 0
        if mentions[r] == 0:
            mentions[r] = len(term_re.findall(term.cases[cid].text))
    b.add("structure", "case_mentions", np.log1p(cases.spread(mentions)))
    per_case = np.bincount(cases.row[cases.row >= 0], minlength=len(cases.labels)).astype(float)
    b.add("structure", "case_candidates", np.log1p(cases.spread(per_case)))
    par = index.levels["paragraph"]
    per_par = np.bincount(par.row[par.row >= 0], minlength=len(par.seqs)).astype(float)
    b.add("structure", "paragraph_candidates", par.spread(per_par))
    b.add("structure", "paragraph_length", np.log1p(par.spread(par.seqs.lengths.astype(float))))
    b.add("structure", "copies", np.log1p(near_duplicate_counts(index)))
    courts = [term.cases[s.case_id].court.lower() for s in index.sentences]
    for name, pattern in _COURTS:
        rx = re.compile(pattern)
        b.add("structure", f"court_{name}", [float(bool(rx.search(c))) if c else 0.0 for c in courts])
    n_mentions = np.asarray(occ, dtype=float)
    b.add("structure", "term_share_of_case", n_mentions / np.maximum(1.0, cases.spread(mentions)))


def _dense_features(b: _Builder, index: TermIndex, settings: FeatureSettings, term_re: re.Pattern) -> None:
    from statinterp.learned import dense

    encoder = dense.get_encoder(settings.dense_model)
    root = getattr(index.analyzer, "cache_root", None)
    term = index.term
    par_ids = list(dict.fromkeys(s.paragraph_id for s in index.sentences))
    par_row = np.asarray([par_ids.index(s.paragraph_id) for s in index.sentences]) if par_ids else np.zeros(0, int)
    provision = term.provision.text if term.provision is not None and term.provision.text.strip() else ""
    queries = [term.query] + ([provision, dense.term_clause(provision, term_re)] if provision else [])
    protos = dense.prototype_texts(term.query)
    S = dense.embed([s.text for s in index.sentences], encoder, root)
    P = dense.embed([term.paragraphs[p].text for p in par_ids], encoder, root)[par_row]
    Q = dense.embed(queries + protos, encoder, root)
    b.add("dense", "cos_term", S @ Q[0])
    b.add("dense", "par_cos_term", P @ Q[0])
    if provision:
        b.add("dense", "cos_provision", S @ Q[1])
        b.add("dense", "cos_term_clause", S @ Q[2])
        b.add("dense", "par_cos_provision", P @ Q[1])
    else:
        b.skipped["dense:provision"] = "the term has no source provision (provision cosines are not computed)"
    b.add("dense", "cos_paragraph", np.einsum("ij,ij->i", S, P))
    sims = S @ S.T
    np.fill_diagonal(sims, np.nan)
    many = len(S) > 1
    b.add("dense", "centrality", np.nanmean(sims, axis=1) if many else np.zeros(len(S)))
    b.add("dense", "max_cos_other", np.nanmax(sims, axis=1) if many else np.zeros(len(S)))
    for name, v in zip(dense.PROTOTYPES, Q[len(queries):], strict=False):
        b.add("dense", f"proto:{name}", S @ v)
    if settings.dense_dims:
        k = min(settings.dense_dims, S.shape[1])
        basis = np.linalg.qr(np.random.default_rng(20261122).standard_normal((S.shape[1], k)))[0]
        coords = S @ basis
        for j in range(k):
            b.add("dense", f"dim{j}", coords[:, j])


def extract_features(index: TermIndex, settings: FeatureSettings | None = None,
                     names: Sequence[str] | None = None) -> FeatureMatrix:
    """The feature matrix of ``index``'s candidates under ``settings``.

    With ``names`` (a trained model's feature names) the result has exactly those columns in
    that order; a column that cannot be computed here (e.g. vectors missing) is 0 and listed in
    ``skipped``.
    """
    settings = settings or FeatureSettings()
    n = len(index)
    b = _Builder(n)
    fam = set(settings.families)
    with_vectors = False
    if "vectors" in fam:  # (neighbours use w2vec* only together with the vectors family)
        with_vectors, why = vectors_available(index, settings)
        if not with_vectors:
            b.skipped["vectors"] = why
    term_re = term_pattern(index.term.query)
    if n:
        if "scores" in fam:
            _method_scores(b, "scores", settings.score_methods, index)
            _gate_features(b, index)
            _provision_and_centrality(b, index)
        if "vectors" in fam and with_vectors:
            _method_scores(b, "vectors", settings.vector_methods, index)
        if "neighbours" in fam:
            _neighbour_features(b, index, settings, with_vectors and "vectors" in fam)
        if "quotes" in fam:
            _quote_features(b, index, term_re)
        if "citations" in fam:
            _citation_features(b, index, settings)
        if "cues" in fam:
            _cue_features(b, index, term_re)
        if "structure" in fam:
            _structure_features(b, index, term_re)
        if "dense" in fam:
            _dense_features(b, index, settings, term_re)
    cols, out_names, out_fams = [], [], []
    for v, name, f in zip(b.cols, b.names, b.families, strict=False):
        if f in SCORE_FAMILIES and settings.standardise != "none":
            if settings.standardise == "both":
                cols += [v, zscore(v), _percentile(v)]
                out_names += [name, name + "#z", name + "#pct"]
                out_fams += [f, f, f]
            else:
                cols.append(zscore(v))
                out_names.append(name + "#z")
                out_fams.append(f)
        else:
            cols.append(v)
            out_names.append(name)
            out_fams.append(f)
    X = np.column_stack(cols) if cols else np.zeros((n, 0))
    fm = FeatureMatrix(X.astype(np.float64), out_names, out_fams, b.skipped)
    if names is not None:
        fm = fm.select(list(names))
    return fm


#: Called with a TermIndex; used by tests to count extractions.
Extractor = Callable[["TermIndex"], FeatureMatrix]


# ============================================================================ features, cached per term

_FEATURES_OF_INDEX: dict[int, tuple[weakref.ref, dict[str, FeatureMatrix]]] = {}


def features_of_index(index: TermIndex, settings: FeatureSettings) -> FeatureMatrix:
    """The feature matrix of ``index`` under ``settings``, computed once per index object and kept
    in memory while the index lives (scoring, explaining and re-ranking a term's sentences one
    after another extract them once)."""
    key = json.dumps(settings.to_dict(), sort_keys=True)
    entry = _FEATURES_OF_INDEX.get(id(index))
    if entry is None or entry[0]() is not index:
        ident = id(index)
        entry = (weakref.ref(index), {})
        _FEATURES_OF_INDEX[ident] = entry
        weakref.finalize(index, _FEATURES_OF_INDEX.pop, ident, None)
    cached = entry[1].get(key)
    if cached is None:
        cached = entry[1][key] = extract_features(index, settings)
    return cached
