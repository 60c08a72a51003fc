"""Surface patterns of a sentence, for the learned ranker's text features.

Plain functions of strings (no corpus, no statistics), one home for every pattern the
``quotes``, ``citations`` and ``cues`` feature families (:mod:`.features`) look for:

- quotations: :func:`quoted_spans`, and the overlap of token runs, :func:`longest_common_run`;
- the term's words: :func:`term_pattern`, :func:`minimal_window`, :func:`count_phrase`;
- citations: :func:`citation_parts`, :func:`provision_patterns`, :func:`cites_provision`, and
  the statute / case / citation-signal expressions;
- cues: :data:`CUES` (definitional and explanatory patterns), attribution and party-subject
  patterns, the copular and predicate constructions around the term, headings, and
  citation-only sentences, all in :func:`cue_flags`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

__all__ = [
    "CUES", "case_citation_share", "citation_parts", "cites_case", "cites_provision", "cites_statute",
    "count_phrase", "cue_flags", "longest_common_run", "minimal_window",
    "provision_patterns", "quoted_spans", "quotes_provision", "reason_evidence", "simple_tokens", "term_pattern",
]

_WORD = re.compile(r"[a-z0-9]+")


def simple_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric runs (the tokeniser of the text features)."""
    return _WORD.findall(text.lower())


#: Opening/closing double quotes; single curly quotes only when the opening one starts a word.
_DOUBLE = re.compile(r"[\"“”„]")


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character spans (without the quote marks) of the quotations in ``text``.

    Double quotes (straight or curly) are paired in order (a curly closing quote closes
    whatever is open); an unclosed opening quote runs to the end of the sentence (a sentence
    cut out of a longer quotation); a lone closing quote near the start means the sentence
    began inside a quotation. Single curly quotes ‘...’ count when ‘ opens a word and the
    matching ’ is not an apostrophe (not followed by a letter).
    """
    spans: list[tuple[int, int]] = []
    marks = [(m.start(), m.group()) for m in _DOUBLE.finditer(text)]
    open_at: int | None = None
    for k, (pos, ch) in enumerate(marks):
        if open_at is None:
            if ch == "”" and not spans and k == 0:  # the sentence starts inside a quotation
                spans.append((0, pos))
                continue
            if ch == "”":
                continue
            open_at = pos + 1
        else:
            if ch == "“":  # a new opening curly quote: treat the previous one as unclosed text
                open_at = pos + 1
                continue
            spans.append((open_at, pos))
            open_at = None
    if open_at is not None and len(text) - open_at > 0:
        spans.append((open_at, len(text)))
    for m in re.finditer(r"(?:(?<=^)|(?<=[\s(\[]))‘([^‘’]{3,}?)’(?![A-Za-z])", text):
        s, e = m.span(1)
        if not any(a <= s and e <= b for a, b in spans):
            spans.append((s, e))
    return [(a, b) for a, b in sorted(spans) if b > a and text[a:b].strip()]


def quotes_provision(text: str, provision_text: str, min_run: int = 3) -> bool:
    """Whether a quoted span of ``text`` (:func:`quoted_spans`) shares a run of at least ``min_run``
    consecutive words with the provision (a dictionary's quoted definition of the term does not)."""
    prov = simple_tokens(provision_text)
    if len(prov) < min_run:
        return False
    return any(longest_common_run(simple_tokens(text[a:e]), prov) >= min_run for a, e in quoted_spans(text))


def reason_evidence(text: str, provision_text: str) -> dict[str, bool]:
    """What a sentence's text shows for the plain reasons that need it
    (:func:`statinterp.evaluation.explain.plain_reasons`): ``quotes_provision``."""
    from statinterp.evaluation.explain import QUOTE_RUN_TOKENS

    return {"quotes_provision": quotes_provision(text, provision_text, QUOTE_RUN_TOKENS)}


def longest_common_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of consecutive tokens occurring in both ``a`` and ``b``."""
    if not a or not b:
        return 0
    vocab: dict[str, int] = {}
    aa = np.asarray([vocab.setdefault(t, len(vocab)) for t in a])
    bb = np.asarray([vocab.get(t, -1) for t in b])
    if not np.isin(aa, bb).any():
        return 0
    best = 0
    prev = np.zeros(len(bb) + 1, dtype=np.int32)
    for x in aa:
        cur = np.zeros_like(prev)
        match = bb == x
        cur[1:] = np.where(match, prev[:-1] + 1, 0)
        m = int(cur.max())
        if m > best:
            best = m
        prev = cur
    return best


def minimal_window(seq: np.ndarray, wanted: np.ndarray) -> int:
    """Length of the shortest stretch of ``seq`` holding every id of ``wanted`` (0 if impossible)."""
    wanted = np.unique(np.asarray(wanted))
    if len(wanted) == 0:
        return 0
    seq = np.asarray(seq)
    hit = np.flatnonzero(np.isin(seq, wanted))
    if len(hit) == 0 or len(np.unique(seq[hit])) < len(wanted):
        return 0
    need = len(wanted)
    count: dict[int, int] = {}
    have = 0
    best = len(seq) + 1
    lo = 0
    for hi in range(len(hit)):
        t = int(seq[hit[hi]])
        count[t] = count.get(t, 0) + 1
        if count[t] == 1:
            have += 1
        while have == need:
            best = min(best, int(hit[hi] - hit[lo]) + 1)
            u = int(seq[hit[lo]])
            count[u] -= 1
            if count[u] == 0:
                have -= 1
            lo += 1
    return best


def count_phrase(seq: np.ndarray, phrase: np.ndarray) -> int:
    """Occurrences of the consecutive ids ``phrase`` in ``seq``."""
    seq = np.asarray(seq)
    k = len(phrase)
    if k == 0 or len(seq) < k:
        return 0
    ok = seq[: len(seq) - k + 1] == phrase[0]
    for j in range(1, k):
        ok &= seq[j: len(seq) - k + 1 + j] == phrase[j]
    return int(ok.sum())


def term_pattern(query: str) -> re.Pattern:
    """Regex of the term in running text: its words in order, any plural ending, any separator."""
    words = [re.escape(w) for w in simple_tokens(query)] or [re.escape(query.lower())]
    return re.compile(r"\b" + r"\W{1,3}".join(w + r"(?:s|es)?" for w in words) + r"\b", re.IGNORECASE)


# ---------------------------------------------------------------------------- citations

_STATUTE = re.compile(
    r"§|\bU\.\s?S\.\s?C\b|\bUSC\b|\bC\.\s?F\.\s?R\b|\bStat\.|\bPub\.\s?L\b|\b[Ss]ection\s+\d|\b[Ss]ecs?\.\s?\d"
    r"|\bCode\b|\bAct\b")
_CASE = re.compile(
    r"\b\d{1,4}\s+(?:U\.\s?S\.|S\.\s?Ct\.|L\.\s?Ed\.|F\.\s?(?:2d|3d|4th)|F\.\s?Supp\.|F\.\s?App'?x|B\.\s?R\.|"
    r"[A-Z][a-z]{0,8}\.\s?(?:App\.\s?)?(?:[234]d|\dth)?|N\.[EW]\.\s?(?:[23]d)?|[A-Z]\.(?:[23]d)?|So\.\s?(?:[23]d)?|"
    r"Cal\.\s?Rptr\.)\s*(?:\d[a-z]{1,2}\s)?\d{1,5}\b"
    r"|\b[A-Z][\w.&'’-]*(?:\s[A-Z][\w.&'’-]*){0,4}\s+v\.\s+[A-Z]"
    r"|\bId\.|\bid\.\s+at\b|\bsupra\b|\binfra\b")
_SIGNAL = re.compile(r"^\W*(?:See(?:,| also| generally| e\.g\.)?|Cf\.|Accord|Compare|E\.g\.,?|Id\.|But see|"
                     r"See id\.)(?:\s|$)")


def cites_statute(text: str) -> bool:
    """Whether ``text`` cites any statute or regulation (§, U.S.C., C.F.R., Stat., "section 12", an Act, a Code)."""
    return bool(_STATUTE.search(text))


def cites_case(text: str) -> bool:
    """Whether ``text`` holds a case citation (reporter cite, "X v. Y", Id., supra, infra)."""
    return bool(_CASE.search(text))


def case_citation_share(text: str) -> float:
    """Share of ``text``'s characters inside case citations (at most 1)."""
    return min(1.0, sum(m.end() - m.start() for m in _CASE.finditer(text)) / max(1, len(text)))


def citation_parts(citation: str) -> tuple[str, str, str, str]:
    """(title, code, section, first subsection) of ``"18 U.S.C. § 1839(3)"`` -> ("18", "U.S.C.", "1839", "3")."""
    m = re.search(r"(?:(\d+)\s+)?([A-Za-z][A-Za-z.\s]*?)\s*§+\s*([0-9A-Za-z.-]+?)(?:\(([0-9A-Za-z]+)\))?(?:\(|\s|$)",
                  citation or "")
    if not m:
        return "", "", "", ""
    return m.group(1) or "", (m.group(2) or "").strip(), m.group(3) or "", m.group(4) or ""


@functools.lru_cache(maxsize=64)
def provision_patterns(citation: str) -> tuple[re.Pattern | None, re.Pattern | None]:
    """(section pattern, full pattern) that find the source provision cited in a text.

    Cached per citation: :func:`cites_provision` asks for the same term's patterns once per
    sentence and paragraph.

    The section pattern matches ``§ 1839``, ``§§ 1839``, ``section 1839``, ``sec. 1839`` and
    ``1839(3)`` (the section number followed by its first subsection); the full pattern
    matches ``18 U.S.C. § 1839`` / ``18 U.S.C. 1839`` / ``18 USC § 1839``.
    """
    title, code, section, sub = citation_parts(citation)
    if not section:
        return None, None
    sec = re.escape(section)
    alts = [rf"§+\s*{sec}(?![0-9A-Za-z])", rf"\b[Ss]ec(?:tion|s?\.)\s*{sec}(?![0-9A-Za-z])"]
    if sub:
        alts.append(rf"(?<![\w.]){sec}\s?\({re.escape(sub)}\)")
    section_pattern = re.compile("|".join(alts))
    full = None
    if title and code:
        code_re = r"\s?".join(re.escape(c) + r"\.?" for c in re.findall(r"[A-Za-z]", code)) if "." in code \
            else re.escape(code)
        full = re.compile(rf"\b{re.escape(title)}\s+{code_re}\s?A?\.?\s*(?:§+\s*)?{sec}(?![0-9A-Za-z])")
    return section_pattern, full


def cites_provision(text: str, citation: str) -> tuple[bool, bool]:
    """(cites the source section, cites it with title and code) for ``text``."""
    section_pattern, full = provision_patterns(citation)
    sec = bool(section_pattern and section_pattern.search(text))
    whole = bool(full and full.search(text))
    return sec or whole, whole


# ---------------------------------------------------------------------------- cues

CUES: dict[str, str] = {
    "means": r"\bmeans?\b|\bmeaning\b",
    "defined": r"\b(?:is|are|be|was|were)\s+defined\b|\bdefin(?:e|es|ed|ing|ition|itions)\b",
    "refers_to": r"\brefer(?:s|red|ring)?\s+to\b",
    "includes": r"\binclud(?:e|es|ed|ing)\b",
    "such_as": r"\bsuch\s+as\b",
    "for_example": r"\bfor\s+(?:example|instance)\b|\be\.\s?g\.",
    "test": r"\btests?\b|\bstandard\b",
    "factors": r"\bfactors?\b|\bcriteria\b|\bcriterion\b|\belements?\b",
    "whether": r"\bwhether\b",
    "negation": r"\b(?:is|are|was|were|does|do|did)\s+not\b|\bn[o']t\b|\bnot\s+(?:a|an|the)\b",
    "determining": r"\bin\s+(?:determining|deciding|assessing|evaluating)\b|\bto\s+determine\b",
    "holding": r"\b(?:we|court)\s+(?:hold|held|conclude[sd]?|find|found|agree|reject)\b|\bhold\s+that\b",
    "interpret": r"\binterpret\w*|\bconstru\w*|\bplain\s+(?:meaning|language)\b|\bordinary\s+meaning\b",
    "legislature": r"\bcongress\w*|\blegislat\w*|\bstatut\w*",
    "term_word": r"\bterms?\b|\bphrase\b|\bwords?\b|\blanguage\b",
    "requires": r"\brequire[sd]?\b|\bmust\b|\bshall\b",
    "because": r"\bbecause\b|\bsince\b|\btherefore\b|\bthus\b",
    "example_noun": r"\bexamples?\b|\binstances?\b|\billustrat\w*",
    "broad_narrow": r"\bbroad\w*|\bnarrow\w*|\bencompass\w*|\bcover(?:s|ed)?\b|\bwithin\s+the\s+meaning\b",
    "question_mark": r"\?",
}
ATTRIBUTION = r"\b(?:argue[sd]?|argument|contend[s]?|contended|contention|assert(?:s|ed)?|claim(?:s|ed)?|" \
              r"maintain(?:s|ed)?|urge[sd]?|insist[s]?|allege[sd]?|according\s+to)\b"
PARTY_SUBJECT = r"^\W*(?:the\s+)?(?:plaintiff|defendant|appellant|appellee|petitioner|respondent|government|" \
                r"claimant|debtor|movant|state|united\s+states|commissioner|irs|secretary)s?(?:['’]s?)?\b"
_CUES = {k: re.compile(v, re.IGNORECASE) for k, v in CUES.items()}
_ATTR = re.compile(ATTRIBUTION, re.IGNORECASE)
_PARTY = re.compile(PARTY_SUBJECT, re.IGNORECASE)
_COPULA = r"[\"”’']?\)?\s*(?:,[^,]{0,60},\s*)?(?:is|are|was|were|means|mean|refers|includes|include|encompasses|" \
          r"covers|requires|connotes|denotes|has\s+been|have\s+been|shall\s+mean|does\s+not|do\s+not)\b"
_PREDICATE = r"\b(?:is|are|was|were|be|been|being|constitut\w*|qualif\w*\s+as|considered|deemed|treated\s+as|" \
             r"counts?\s+as|amount\w*\s+to|as)\s+(?:not\s+)?(?:an?|the|any|one|such)?\s*(?:[\w-]+\s+){0,2}[\"“'‘]?\s*$"
_HEADING = re.compile(r"^\s*(?:[IVXLC]+|[A-Z]|\d{1,2}|[a-z])[.)]\s|^\s*\(?[a-z0-9]{1,3}\)\s")


def cue_flags(text: str, term_re: re.Pattern | None = None) -> dict[str, float]:
    """The cue features of one sentence (1.0 / 0.0 flags, plus a few counts)."""
    out = {f"cue:{k}": float(bool(p.search(text))) for k, p in _CUES.items()}
    out["cue:n_cues"] = float(sum(out.values()))
    out["cue:attribution"] = float(bool(_ATTR.search(text)))
    out["cue:party_subject"] = float(bool(_PARTY.search(text)))
    copular = 0.0
    if term_re is not None:
        for m in term_re.finditer(text):
            if re.match(_COPULA, text[m.end():], re.IGNORECASE):
                copular = 1.0
                break
    out["cue:copular_term"] = copular
    subject = predicate = capital = meaning = paren = 0.0
    if term_re is not None:
        for m in term_re.finditer(text):
            before = text[max(0, m.start() - 60): m.start()]
            after = text[m.end(): m.end() + 60]
            if len(simple_tokens(text[: m.start()])) <= 2:
                subject = 1.0
            if re.search(_PREDICATE, before, re.IGNORECASE):
                predicate = 1.0
            if m.group()[:1].isupper() and m.start() > 2 and not re.search(r"[.!?:]\W*$", text[: m.start()]):
                capital = 1.0
            if re.match(r"\W{0,3}(?:within\s+the\s+meaning|under|as\s+(?:defined|used)|for\s+purposes)", after,
                        re.IGNORECASE):
                meaning = 1.0
            if before.rstrip().endswith("(") or re.match(r"\W{0,2}\)", after):
                paren = 1.0
    out["cue:term_subject"] = subject
    out["cue:term_predicate"] = predicate
    out["cue:term_capitalised"] = capital
    out["cue:term_within_meaning"] = meaning
    out["cue:term_parenthetical"] = paren
    words = simple_tokens(text)
    stripped = text.strip()
    letters = [c for c in stripped if c.isalpha()]
    upper = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    heading = len(words) <= 12 and (not re.search(r"[.?!:;\"”]\s*$", stripped) or upper > 0.6
                                    or bool(_HEADING.match(stripped)) and len(words) <= 8)
    out["cue:heading"] = float(heading)
    cite_share = case_citation_share(stripped)
    out["cue:citation_only"] = float(bool(_SIGNAL.match(stripped)) or cite_share > 0.5 or
                                     (len(words) <= 25 and sum(w.isdigit() for w in words) >= max(3, len(words) / 3)))
    out["cue:signal_start"] = float(bool(_SIGNAL.match(stripped)))
    return out
