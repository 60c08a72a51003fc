"""The review of one term: rankings, near-duplicate groups, filters, labels and re-ranking.

Plain Python (no web framework), so scripts and tests can drive a review without a server:

    session = ReviewSession(prepared["vehicle"], LabelStore("labels.sqlite"))
    page = session.page(Filters(unlabelled=True))
    session.label(["case-07-op1-p008-s0"], "high value")
    session.rerank()          # the unlabelled sentences re-ranked with this term's labels

Which labels count: only the reviewer's, from the :class:`~statinterp.corpus.labels.LabelStore`.
A data-set term's own labels are hidden (``show_data_labels=False``) so a reviewer can test
themselves; with ``show_data_labels=True`` they are shown beside each sentence, but never used
for re-ranking or export.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from statinterp.app.review.errors import NotFound
from statinterp.corpus.dataset import LABEL_GAINS
from statinterp.corpus.labels import LabelRecord, LabelStore, parse_label
from statinterp.errors import UsageError

if TYPE_CHECKING:
    from statinterp.evaluation.ranking import Ranking
    from statinterp.index.term_index import TermIndex
    from statinterp.rankers.base import Ranker

__all__ = ["REVIEW_METHODS", "Continuous", "Filters",
           "Item", "NotFound", "Page", "Reranked", "ReviewSession", "year_of"]

#: Methods offered in the page's method menu (none needs word vectors, so switching is quick).
REVIEW_METHODS = ("TF-ISF-p", "Tp-Nr", "Tp-Tg-Nr", "BM25-p", "QLLM-p", "TF-ISF", "NWR", "Random")
#: Labels in the order of the keys 1-4.
LABEL_KEYS = ("high value", "certain value", "potential value", "no value")
PER_PAGE = 20


def year_of(date: str) -> str:
    """The four-digit year of a case date (``2004-05-18`` -> ``2004``), or ``""``."""
    head = date.strip()[:4]
    return head if len(head) == 4 and head.isdigit() else ""


@dataclass(frozen=True)
class Filters:
    """What the ranking page shows: ``unlabelled`` only, one ``label`` (reviewer's; ``"none"`` =
    unlabelled), one ``court``, one ``year``, sentences containing ``search``; near-duplicates
    collapsed (``collapse``)."""

    unlabelled: bool = False
    label: str = ""
    court: str = ""
    year: str = ""
    search: str = ""
    collapse: bool = True


@dataclass
class Reranked:
    """A re-ranking with the reviewer's labels: new scores, order, and how far each candidate moved."""

    scores: np.ndarray
    order: np.ndarray
    n_labels: int
    moved: dict[int, int]  # candidate -> places moved up (negative: down) among the unlabelled
    distinct_gains: int = 0  # how many different labels the learner saw (fewer than 2: nothing to learn)


@dataclass
class Continuous:
    """The continuous order of one method: re-ranked below the reviewer's position after every label."""

    method: str
    model: Any  # statinterp.learned.feedback.ContinuousModel
    order: np.ndarray
    scores: np.ndarray
    score_when_read: np.ndarray
    n_labels: int = 0
    position: int = 0  # the first ``position`` of ``order`` are the labelled sentences, in the order read
    remaining: Any = None  # statinterp.learned.feedback.Remaining
    seconds: float = 0.0  # time of the last update


@dataclass
class Item:
    """One row of the ranking page: a sentence (the best copy of its group) and what is shown with it."""

    position: int  # candidate position in the index
    rank: int  # 1-based rank in the current order (before filtering)
    score: float
    sentence: Any
    case: Any
    opinion: Any
    record: LabelRecord | None
    copies: list[str]  # ids of the other near-duplicates collapsed under this one
    moved: int | None = None
    method_score: float | None = None  # the method's own score (rank's) when ``score`` is another's (continuous)

    @property
    def label(self) -> str | None:
        return None if self.record is None else self.record.label

    @property
    def note(self) -> str:
        return "" if self.record is None else self.record.note


@dataclass
class Page:
    items: list[Item]
    number: int
    pages: int
    matching: int  # groups matching the filters
    groups: int  # groups in all
    filters: Filters
    method: str
    reranked: Reranked | None
    counts: dict[str, int] = field(default_factory=dict)
    continuous: Continuous | None = None


class ReviewSession:
    """One term under review; thread-safe (the web app serves requests from a thread pool)."""

    def __init__(self, index: TermIndex, store: LabelStore, *, method: str = "TF-ISF-p",
                 model: Ranker | None = None, show_data_labels: bool = False, dedupe_threshold: float = 0.9,
                 methods: tuple[str, ...] = REVIEW_METHODS, continuous: bool = True):
        from statinterp.rankers.grammar import build_method

        self.index = index
        self.term = index.term
        self.store = store
        self.show_data_labels = show_data_labels
        self.dedupe_threshold = dedupe_threshold
        self._rankers: dict[str, Ranker] = {}
        if model is not None:
            self._rankers[model.name] = model
        self.default_method = model.name if model is not None else build_method(method).name
        if model is None:
            self._rankers[self.default_method] = build_method(method)
        for name in methods:
            self._rankers.setdefault(name, build_method(name))
        self.by_id = {s.id: i for i, s in enumerate(index.sentences)}
        self._lock = threading.RLock()
        self._rankings: dict[str, Ranking] = {}
        self._groups: dict[tuple[str, bool], list[tuple[int, list[int]]]] = {}
        self._reranked: dict[str, Reranked] = {}
        self._sets: list[frozenset] | None = None
        self.continuous = continuous
        self._continuous: dict[str, Continuous] = {}
        self.courts = sorted({c.court for c in self.term.cases.values() if c.court})
        self.years = sorted({year_of(c.date) for c in self.term.cases.values()} - {""})

    @staticmethod
    def authority(case) -> str:
        """The court's authority for a card (``federal intermediate appellate court``; ``""``: unknown),
        :func:`statinterp.corpus.authority.court_authority`."""
        from statinterp.corpus.authority import court_authority

        found = court_authority(case.court, case.jurisdiction)
        return found.describe() if found.level or found.system else ""

    # ----------------------------------------------------------------------------- rankings

    @property
    def key(self) -> str:
        return self.term.key

    @property
    def methods(self) -> list[str]:
        return list(self._rankers)

    def trained_on_term(self, name: str | None = None) -> bool:
        """Whether the (learned) ranker ``name`` was trained on this term's own labels."""
        return self.key in set(getattr(self.ranker(name), "trained_on", ()) or ())

    def ranker(self, name: str | None) -> Ranker:
        name = name or self.default_method
        if name not in self._rankers:
            raise NotFound(f"unknown method {name!r} (offered: {', '.join(self._rankers)})")
        return self._rankers[name]

    def ranking(self, name: str | None = None) -> Ranking:
        from statinterp.evaluation.ranking import rank

        ranker = self.ranker(name)
        with self._lock:
            if ranker.name not in self._rankings:
                self._rankings[ranker.name] = rank(ranker, self.index)
            return self._rankings[ranker.name]

    def _token_sets(self) -> list[frozenset]:
        from statinterp.evaluation.ranking import token_sets

        if self._sets is None:
            self._sets = token_sets(self.index)
        return self._sets

    def _order(self, method: str, reranked: bool) -> tuple[np.ndarray, np.ndarray]:
        if reranked and method in self._reranked:
            r = self._reranked[method]
            return r.order, r.scores
        if self.continuous and not reranked:
            state = self.continuous_state(method)
            return state.order, state.scores
        ranking = self.ranking(method)
        return ranking.order, ranking.scores

    def groups(self, method: str, reranked: bool = False, collapse: bool = True) -> list[tuple[int, list[int]]]:
        """(best copy, [its copies, best first]) in rank order; one group per sentence without ``collapse``."""
        from statinterp.evaluation.ranking import collapse as collapse_groups

        order, _ = self._order(method, reranked)
        if not collapse:
            return [(int(c), [int(c)]) for c in order]
        key = (method, reranked and method in self._reranked)
        with self._lock:
            if key not in self._groups:
                self._groups[key] = collapse_groups(order.tolist(), self._token_sets(), self.dedupe_threshold)
            return self._groups[key]

    def copies_of(self, sentence_id: str, method: str | None = None) -> list[str]:
        """Ids of the near-duplicates of ``sentence_id`` (itself excluded)."""
        from statinterp.evaluation.ranking import jaccard

        i = self.position(sentence_id)
        sets = self._token_sets()
        return [s.id for j, s in enumerate(self.index.sentences)
                if j != i and sets[i] and jaccard(sets[i], sets[j]) >= self.dedupe_threshold - 1e-12]

    # ----------------------------------------------------------------------------- lookups

    def position(self, sentence_id: str) -> int:
        if sentence_id not in self.by_id:
            raise NotFound(f"sentence {sentence_id!r} is not a candidate of {self.term.query!r}")
        return self.by_id[sentence_id]

    def sentence(self, sentence_id: str):
        return self.index.sentences[self.position(sentence_id)]

    def pin_cite(self, sentence) -> str:
        """The citation to paste for a sentence, with its pin page when known
        (:func:`statinterp.corpus.pin_cites.sentence_pin_cite`: the one rank shows)."""
        from statinterp.corpus.pin_cites import sentence_pin_cite

        return sentence_pin_cite(self.term, sentence)

    def records(self) -> dict[str, LabelRecord]:
        return {sid: r for sid, r in self.store.records(self.key).items() if sid in self.by_id}

    def counts(self, records: dict[str, LabelRecord] | None = None) -> dict[str, int]:
        """Sentences per reviewer label, plus ``labelled`` and ``total``."""
        records = self.records() if records is None else records
        counts = {label: 0 for label in LABEL_KEYS}
        for r in records.values():
            if r.label is not None:
                counts[r.label] += 1
        counts["labelled"] = sum(counts[label] for label in LABEL_KEYS)
        counts["total"] = len(self.index)
        return counts

    # ----------------------------------------------------------------------------- the page

    def page(self, filters: Filters = Filters(), number: int = 1, method: str | None = None,
             reranked: bool = False, per_page: int = PER_PAGE) -> Page:
        method = self.ranker(method).name
        if filters.label and filters.label != "none":
            parse_label(filters.label)  # a UsageError for an unknown label
        reranked = reranked and method in self._reranked
        order, scores = self._order(method, reranked)
        records = self.records()
        sentences = self.index.sentences
        cases = self.term.cases
        needle = filters.search.strip().lower()
        wanted_label = parse_label(filters.label) if filters.label and filters.label != "none" else None

        def keep(c: int) -> bool:
            s = sentences[c]
            rec = records.get(s.id)
            label = None if rec is None else rec.label
            if filters.unlabelled and label is not None:
                return False
            if filters.label == "none" and label is not None:
                return False
            if wanted_label is not None and label != wanted_label:
                return False
            case = cases[s.case_id]
            if filters.court and case.court != filters.court:
                return False
            if filters.year and year_of(case.date) != filters.year:
                return False
            if needle and needle not in s.text.lower() and needle not in (case.short_name or case.name).lower():
                return False
            return True

        groups = self.groups(method, reranked, filters.collapse)
        rank_of = {c: r for r, (c, _) in enumerate(groups, start=1)}  # rows numbered without gaps
        matching = [(c, members) for c, members in groups if keep(c)]
        pages = max(1, math.ceil(len(matching) / per_page))
        if number < 1 or number > pages:
            number = min(max(number, 1), pages)
        moved = self._reranked[method].moved if reranked else {}
        own = self.ranking(method).scores  # what `statinterp rank` gives each sentence with this method
        items = []
        for c, members in matching[(number - 1) * per_page: number * per_page]:
            s = sentences[c]
            items.append(Item(
                position=c, rank=rank_of[c], score=float(scores[c]), sentence=s, case=cases[s.case_id],
                opinion=self.term.opinions.get(s.opinion_id), record=records.get(s.id),
                copies=[sentences[m].id for m in members[1:]], moved=moved.get(c) if reranked else None,
                method_score=None if scores is own else float(own[c])))
        return Page(items, number, pages, len(matching), len(groups), filters, method,
                    self._reranked.get(method) if reranked else None, self.counts(records),
                    self.continuous_state(method) if self.continuous and not reranked else None)

    # ----------------------------------------------------------------------------- labelling

    def label(self, sentence_ids: list[str], label: object, note: str | None = None, source: str = "") -> float:
        """Give the sentences a label (``""``/``None`` clears it); durable when this returns."""
        if not sentence_ids:
            raise UsageError("no sentence to label")
        for sid in sentence_ids:
            self.position(sid)
        return self.store.set_labels(self.key, sentence_ids, parse_label(label), note=note, source=source)

    def set_note(self, sentence_id: str, note: str, source: str = "") -> float:
        self.position(sentence_id)
        return self.store.set_note(self.key, sentence_id, note, source=source)

    def feedback_labels(self) -> dict[int, int]:
        """The reviewer's labels as candidate position -> gain (0..3)."""
        return {self.by_id[sid]: LABEL_GAINS[label] for sid, label in self.store.labels(self.key).items()
                if sid in self.by_id}

    def rerank(self, method: str | None = None) -> Reranked:
        """Re-rank with this term's labels through :func:`statinterp.learned.feedback.feedback_scores`,
        with ``method``'s scores as the prior; remembers how far each unlabelled sentence moved."""
        from statinterp.evaluation.metrics import rank_order

        prior = self.ranking(method)
        labels = self.feedback_labels()
        if not labels:
            raise UsageError("label a few sentences first: re-ranking learns from this term's labels")
        try:
            from statinterp.learned.feedback import feedback_scores
        except ImportError:
            raise UsageError("re-ranking needs statinterp.learned.feedback (feedback_scores), which this "
                             "installation of statinterp lacks") from None
        scores = np.asarray(feedback_scores(self.index, prior.scores, labels), dtype=np.float64)
        if scores.shape != (len(self.index),) or np.isnan(scores).any():
            raise RuntimeError(f"feedback_scores returned {scores.shape} scores (NaN: {bool(np.isnan(scores).any())}) "
                               f"for {len(self.index)} candidates")
        order = rank_order(scores, self.index.sentence_ids.astype(str))
        before = [int(c) for c in prior.order if int(c) not in labels]
        after = [int(c) for c in order if int(c) not in labels]
        old_rank = {c: r for r, c in enumerate(before)}
        moved = {c: old_rank[c] - r for r, c in enumerate(after)}
        result = Reranked(scores, order, len(labels), moved, len(set(labels.values())))
        with self._lock:
            self._reranked[prior.method] = result
            self._groups = {k: v for k, v in self._groups.items() if k != (prior.method, True)}
        return result

    # ----------------------------------------------------------------------------- continuous mode

    def continuous_state(self, method: str | None = None) -> Continuous:
        """The continuous order of ``method`` (made on first use from its ranking, brought up to date
        with the label store by :meth:`update_continuous`)."""
        name = self.ranker(method).name
        with self._lock:
            state = self._continuous.get(name)
        if state is None:
            state = self.update_continuous(name)
        return state

    def update_continuous(self, method: str | None = None) -> Continuous:
        """Refit the continuous learner with every label in the store and re-rank the unread
        candidates below the reviewer's position: the labelled sentences stay on top in the order
        they were read (a cleared label returns its sentence to the rest). Also re-estimates how
        many valuable sentences the unread rest holds."""
        import time

        from statinterp.learned.feedback import (
            ContinuousModel,
            estimate_remaining,
            ranker_scores,
            rerank_rest,
            term_features,
        )

        ranker = self.ranker(method)
        with self._lock:
            started = time.perf_counter()
            ids = self.index.sentence_ids.astype(str)
            state = self._continuous.get(ranker.name)
            if state is None:
                ranking = self.ranking(ranker.name)
                model = ContinuousModel(term_features(self.index).X, ranker_scores(ranker, self.index))
                state = Continuous(ranker.name, model, np.asarray(ranking.order), model.z_prior.copy(),
                                   model.z_prior.copy())
                self._continuous[ranker.name] = state
            labels = self.feedback_labels()
            if labels != {r: int(g) for r, g in state.model.labels.items()} or state.remaining is None:
                rank_in_order = np.empty(len(state.order), dtype=np.int64)
                rank_in_order[state.order] = np.arange(len(state.order))
                new = sorted((r for r in labels if r not in state.model.labels), key=lambda r: rank_in_order[r])
                state.score_when_read[new] = state.scores[new]
                state.model.set_labels(labels)
                # the read sentences first, in the order they were read; the rest re-ranked below them
                read_order = [int(c) for c in state.order[:state.position] if int(c) in labels] + new
                position = len(read_order)
                unread = np.asarray([c for c in state.order if int(c) not in labels], dtype=np.int64)
                state.scores = state.model.scores()
                state.order = rerank_rest(np.concatenate([np.asarray(read_order, dtype=np.int64), unread]), position,
                                          state.scores, ids)
                state.position = position
                state.n_labels = len(labels)
                read = np.zeros(len(ids), dtype=bool)
                read[list(labels)] = True
                gains = np.zeros(len(ids))
                for r, g in labels.items():
                    gains[r] = g
                state.remaining = estimate_remaining(state.scores, read, gains,
                                                     score_when_read=state.score_when_read)
                self._groups = {k: v for k, v in self._groups.items() if k[0] != ranker.name or k[1]}
            state.seconds = time.perf_counter() - started
            return state

    # ----------------------------------------------------------------------------- context, explain, export

    def context(self, sentence_id: str) -> dict[str, Any]:
        """The sentence's paragraph and opinion, each with the sentence marked in place (escaped HTML)."""
        from markupsafe import escape

        from statinterp.app.review.markup import highlight_span, locate

        s = self.sentence(sentence_id)
        paragraph = self.term.paragraphs.get(s.paragraph_id)
        opinion = self.term.opinions.get(s.opinion_id)
        out: dict[str, Any] = {"sentence": s, "case": self.term.cases[s.case_id], "opinion": opinion}
        p_html = o_html = None
        if paragraph is not None:
            at = locate(paragraph.text, s.text)
            p_html = highlight_span(paragraph.text, at, at + len(s.text)) if at >= 0 else escape(paragraph.text)
        if opinion is not None:
            at = -1
            if paragraph is not None:
                p_at = locate(opinion.text, paragraph.text)
                inner = locate(paragraph.text, s.text)
                if p_at >= 0 and inner >= 0:
                    at = p_at + inner
            if at < 0:
                at = locate(opinion.text, s.text)
            o_html = highlight_span(opinion.text, at, at + len(s.text)) if at >= 0 else escape(opinion.text)
        out["paragraph_html"] = p_html
        out["opinion_html"] = o_html
        return out

    def explain(self, sentence_id: str, method: str | None = None) -> tuple[list[str], str]:
        """Plain-language reasons (learned models; empty for a method) and the full explanation as text."""
        from statinterp.evaluation.explain import explain_sentence, format_explanation
        from statinterp.learned.sentence_patterns import reason_evidence

        self.position(sentence_id)
        expl = explain_sentence(self.ranker(method), self.index, sentence_id, evidence=reason_evidence)
        if not self.show_data_labels:  # the data set's label stays hidden: show the reviewer's
            record = self.records().get(sentence_id)
            expl["label"] = None if record is None else record.label
        return list(expl.get("reasons", [])), format_explanation(expl)

    def memo_bytes(self, method: str | None = None) -> bytes:
        """The research memo of the term as Word (:mod:`statinterp.app.memo`): the sentences the
        reviewer labelled high or certain value, in ``method``'s order (else its top 20, unreviewed)."""
        from statinterp.app.memo import build_memo, memo_docx

        return memo_docx(build_memo(self.term, self.ranking(method), self.store.labels(self.key)))

    def export_bytes(self) -> bytes:
        """The term as a term zip with the reviewer's labels."""
        from statinterp.corpus.dataset import term_zip_bytes

        return term_zip_bytes(self.term, self.store.labels(self.key))
