"""The plain-Python reference: background statistics and TF-ISF / BM25 / QLLM recomputed with
plain loops over Python lists and dicts, straight from the formulas (no NumPy, no statinterp code),
on the hand-made corpora of :mod:`tests.support.corpora`. Tests compare statinterp's figures
with these (fixture ``reference`` in tests/conftest.py)."""

from __future__ import annotations

import math
import re
from collections import Counter

from tests.support.corpora import TINY_OPINION_SENTENCES, build_records


def ref_tokens(text: str) -> list[str]:
    """Tokens of TINY's texts: lower-cased runs of letters/digits (every word is its own lemma)."""
    return re.findall(r"[a-z0-9]+", text.lower())


def ref_sentences(line: str) -> list[str]:
    """Sentences of one line of TINY: split after '.' before a capital letter."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", line)


class RefStats:
    """N, df, cf, total tokens of a list of units (each a list of tokens); empty units not counted."""

    def __init__(self, units: list[list[str]]):
        units = [u for u in units if u]
        self.N = len(units)
        self.total = sum(len(u) for u in units)
        self.df: dict[str, int] = {}
        self.cf: dict[str, int] = {}
        for unit in units:
            for t in set(unit):
                self.df[t] = self.df.get(t, 0) + 1
            for t in unit:
                self.cf[t] = self.cf.get(t, 0) + 1

    @property
    def avg(self) -> float:
        return self.total / self.N


class Reference:
    """Background statistics and lexical scores of a spec, from the formulas, with plain loops."""

    K1 = 1.2
    K3 = 1.2
    B = 0.75
    QLLM_LAM = 0.9

    tokens = staticmethod(ref_tokens)
    sentences = staticmethod(ref_sentences)
    #: the spaCy sentences of each opinion of TINY, in order
    opinion_sentences = TINY_OPINION_SENTENCES

    def __init__(self, spec: dict):
        self.spec = spec
        self.records = build_records(spec)

    # ---- background statistics: every unit of every distinct case of every term
    def background(self) -> dict[str, RefStats]:
        units: dict[str, list[list[str]]] = {"sentence": [], "paragraph": [], "opinion": [], "case": []}
        seen = set()
        for key, term in self.spec.items():
            for cid, (_header, ops) in term["cases"].items():
                case_text = self.records[key]["case"][cid]["text"]
                if case_text in seen:
                    continue
                seen.add(case_text)
                units["case"].append(ref_tokens(case_text))
                for lines in ops.values():
                    units["opinion"].append(ref_tokens("\n".join(lines)))
                    for line in lines:
                        units["paragraph"].append(ref_tokens(line))
                        for sentence in ref_sentences(line):
                            units["sentence"].append(ref_tokens(sentence))
        return {lvl: RefStats(u) for lvl, u in units.items()}

    # ---- one term's candidates and their context units
    def candidate_texts(self, key: str, level: str) -> list[str]:
        rec = self.records[key]
        out = []
        for s in rec["sentence"].values():
            if level == "sentence":
                out.append(s["text"])
            elif level == "paragraph":
                out.append(rec["paragraph"][s["paragraph_id"]]["text"])
            elif level == "opinion":
                out.append(rec["opinion"][s["opinion_id"]]["text"])
            else:
                out.append(rec["case"][s["case_id"]]["text"])
        return out

    def candidates(self, key: str) -> dict[str, RefStats]:
        """One term's candidate-only statistics: its candidate sentences, their distinct
        paragraphs and opinions, and all its cases."""
        out = {}
        for level in ("sentence", "paragraph", "opinion", "case"):
            units = []
            if level == "sentence":
                units += [ref_tokens(t) for t in self.candidate_texts(key, level)]
            elif level == "case":
                units += [ref_tokens(c["text"]) for c in self.records[key]["case"].values()]
            else:
                ids = {s[f"{level}_id"] for s in self.records[key]["sentence"].values()}
                units += [ref_tokens(self.records[key][level][i]["text"]) for i in sorted(ids)]
            out[level] = RefStats(units)
        return out

    def neighbours(self, key: str, d: int) -> list[list[str] | None]:
        """Tokens of the sentence ``d`` places from each candidate in its opinion (None if none)."""
        out = []
        for s in self.records[key]["sentence"].values():
            seq = TINY_OPINION_SENTENCES[s["opinion_id"]]
            j = seq.index(s["text"]) + d
            out.append(ref_tokens(seq[j]) if 0 <= j < len(seq) else None)
        return out

    # ---- the scores, straight from the formulas
    @staticmethod
    def tfisf(query: list[str], unit: list[str], st: RefStats) -> float:
        """Σ_t log(tf+1) · log((N+1)/(0.5+df)) · log(qtf+1)."""
        score = 0.0
        for t, qtf in Counter(query).items():
            tf = unit.count(t)
            df = st.df.get(t, 0)
            score += math.log(tf + 1) * math.log((st.N + 1) / (0.5 + df)) * math.log(qtf + 1)
        return score

    @classmethod
    def bm25(cls, query: list[str], unit: list[str], st: RefStats, k1: float | None = None,
             b: float | None = None, k3: float | None = None) -> float:
        """Σ_t (k1+1)tf/(k1(1−b+b·L/avg)+tf) · log((N−df+0.5)/(df+0.5)) · (k3+1)qtf/(k3+qtf)."""
        k1 = cls.K1 if k1 is None else k1
        b = cls.B if b is None else b
        k3 = cls.K3 if k3 is None else k3
        score = 0.0
        for t, qtf in Counter(query).items():
            tf = unit.count(t)
            df = st.df.get(t, 0)
            tf_part = (k1 + 1) * tf / (k1 * (1 - b + b * len(unit) / st.avg) + tf)
            idf = math.log((st.N - df + 0.5) / (df + 0.5))
            qtf_part = (k3 + 1) * qtf / (k3 + qtf)
            score += tf_part * idf * qtf_part
        return score

    @classmethod
    def qllm(cls, query: list[str], unit: list[str], st: RefStats, context: list[str] | None = None,
             lam1: float = 0.0, lam: float | None = None) -> float:
        """Σ_t qtf · log((1−λ) cf/|C| + (λ−λ1) tf_s/L_s + λ1 tf_c/L_c); tokens with cf = 0 left out."""
        lam = cls.QLLM_LAM if lam is None else lam
        score = 0.0
        for t, qtf in Counter(query).items():
            cf = st.cf.get(t, 0)
            if cf == 0:
                continue
            p_s = unit.count(t) / len(unit) if unit else 0.0
            p_c = (context.count(t) / len(context) if context else 0.0) if context is not None else 0.0
            score += qtf * math.log((1 - lam) * cf / st.total + (lam - lam1) * p_s + lam1 * p_c)
        return score

