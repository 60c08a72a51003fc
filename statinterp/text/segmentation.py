"""Text-analysis pipeline: tokenizer, lookup lemmatizer and a legal-aware sentence segmenter.

spaCy's rule-based ``sentencizer`` ends a sentence at every ``.`` token.  In case law
that breaks citations ("123 F. Supp. 2d 456", "Pub. L. No. 105-304", "2d Cir. 2016")
into several "sentences", and it lets sentences run across line breaks.  With
``legal_rules=True`` :func:`build_pipeline` fixes that with two cheap mechanisms:

1. Tokenizer special cases keep legal abbreviations (``Supp.``, ``Cir.``, ``Fed.``,
   ``Reg.``, ``Dep.``, ``Countercl.`` ...; :data:`LEGAL_ABBREVIATIONS`: most from the lists
   reporters-db carries, state and case-name abbreviations and the words of statute and journal
   names, "Transp.", "Mortg.", "Admin."; a short hand-kept list for the rest) as single tokens
   *with* their period, as written and in ALL CAPS ("INC.", "SUPP.") unless the stem is
   an English word ("ill.", "MASS.", "pet." are not special-cased).  Dotted forms
   (``U.S.C.``, ``S.D.N.Y.``, ``F.3d``), initials (``J.``) and spaCy's own exceptions
   (``v.``, ``Inc.``, ``Jan.``, ``Mass.``) are already single tokens.  "Id"/"id" is kept
   whole (spaCy splits it into "I" + "d" as in "I'd").
2. The ``legal_sentence_boundaries`` component, used instead of the sentencizer,
   classifies each distinct token text once (cached), works on NumPy arrays, and runs
   Python code only at the few tokens that can end a sentence.  Rules:

   * A newline always ends a sentence: paragraphs are lines and sentences never cross
     a line break.  Only exception: a line holding nothing but star-page markers
     ("*457", "[*12]", "*3-*4") is glued to the sentence before it (to the next line
     when it is the first line), so it never forms a sentence of its own.  A bare
     number on its own line ("12") is a footnote mark in CAP texts and stays a line.
   * ``.``, ``!``, ``?`` (and runs such as "?!" or ". . .") end a sentence.  Closing
     brackets/quotes and a glued star-page marker after them stay with the ending
     sentence; the next one starts at the first token preceded by whitespace, so an
     opening bracket or quote opens the next sentence (the sentencizer glues it to
     the previous one).
   * No boundary when the next word starts with a lower-case letter ("cert. denied",
     ". . . may require"), when the next token is a bare "§"/"¶" (the citation of a
     quotation: '... owner.” § 1201(a)(3).'), when nothing separates the two tokens,
     or when the "." was split off a known abbreviation or a glued court name
     ("N.D.Cal" + ".").
   * No boundary after an abbreviation, except: after ``et seq.``, ``etc.``, ``Id.``,
     ``Ibid.``, ``Jr.``, ``Sr.``, ``Esq.`` when a capitalised ordinary word follows
     (:data:`STRONG_FINAL_ABBREVIATIONS`); after ``Inc.``, ``Corp.``, ``Co.``,
     ``Ltd.``, ``U.S.`` ... only when the next word is a typical sentence opener
     ("The", "In", "However", "Id." ...; :data:`WEAK_FINAL_ABBREVIATIONS`), since
     "Co. Pension Trust" or "U.S. Supreme Court" continue the sentence.
   * No boundary inside a citation: where a capitalised word and its period end the sentence
     and a citation could go on after it ("... see Marl." | "Veh. Code § 21.200", "Cal. Veh." |
     "Code § 21200", "212 Marl." | "App. 341"), the boundary is dropped when it falls inside a
     citation eyecite finds in the line, or one shaped as reporters-db's statute and reporter
     patterns are for a state or reporter eyecite does not know (:func:`_inside_citation`).
     eyecite runs on a few lines only (103 of the 17,908 lines of 150 of the data set's cases), and
     ingest reuses its answer for the paragraph's stored citations.
   * A list label at the start of a line is split off when a capitalised word
     follows: "(d) In cases ...", "(1) (A) The ...", "3. The ...", "{¶ 23} As ...".
     (Lettered and Roman headings, "A. Background", "II. DISCUSSION", stay whole.)
     The annotated data set segments its candidate sentences this way (a numbered heading
     too: "3." | "Judicial Analysis of Hybrid Instruments").

``build_pipeline(join_lines=True)`` (``statinterp find``; never the index or the rankers) also
joins a line break where the line before does not end a sentence and the line after continues
it (:func:`_breaking_newlines`), and follows the data set's list-label conventions: a label
that opens a list item inside a sentence ends the sentence before it, the label staying with
that sentence ("... threats; or\n“(3)" | "Substantial deterioration ...", "... spreads: (1)" |
"Those transactions ..."); at a line start a lower-case letter label ("b.") and a footnote's
number ("3 A service-connected ...") are split off like "(d)". More of the data set's conventions,
in line-joining mode only: a closing double quote after a word ends a sentence before a capitalised
word ('... protected under”' | 'Title 17, whereas ...'; not after a bracketed alteration: '... that “tag[s]”
Congress ...' goes on); so does a colon after a single word opening a line ("Memorandum:" | "This action
..."), but not before a date ("Dated: August 5, 2016" is whole, and a sentence of its own after other
text); a closing quote set off by a space after final punctuation opens the next sentence ('... owner....
”' | '” 17 U.S.C. § 1201.'), unless a sentence opener follows it; a closing parenthesis after a number
ends a sentence before a capitalised word ('... Dep. at 104)' | 'Plaintiffs criticism ...'); a label after
a comma (", (ii)", ", or (ii)") continues the sentence; a heading line (ending with a letter) is joined to a numbered
paragraph after it, the number staying with the heading ("... Programs\n72." | "SCC admits ..."), and
a line ending with a semicolon to a numbered item opening with a gerund (";\n4." | "Using ..."), neither
to a numbered heading ("2. ASSIGNMENTS OF ERROR"); a numbered heading, a label and at most twelve capitalised
words with no punctuation at the end ("(a) Bank Murders", "2. ASSIGNMENTS OF ERROR": :func:`_is_heading`),
keeps its label, and a label line is not attached to a heading before or after it ("4. ANALYSIS AND
RESOLUTION\n(a) Ex Post Facto Claim" stay two); a run of five or more periods before a number is a table of
contents' dot leader ("Background........ 276 (a) Bank Murders"): no boundary there, nor at the label after
its page number; a
line ending with a colon is joined to a line starting with a lower-case word ("... defines a mask
work as:\na series of ..."); a line ending with a word no sentence ends with ("the", "of", "on", "that") or
with a hyphen after a letter or digit is joined to the next line whatever it starts with ("... Governor of
the\nState of Maine", "... at 8:30 p.m. on\nMay 4, ...": a page break or a caption line cut the sentence);
and a label glued to the next word ("(A)is ...", "(A)(i) is ...", "(3)Sums ...") continues an unfinished line.
None of this changes the default segmentation.

Each line-joining rule is switchable by name (:data:`JOIN_RULES`;
``build_pipeline(join_lines=True, join_rules=...)``). ``find`` uses :data:`DEFAULT_JOIN_RULES`: the
rules that ablation keeps on the 14 shared terms (each rule taken out of the full set alone; kept
when that loses labelled sentences: :func:`statinterp.evaluation.tuning.choose_rules`), the
procedure whose figure on terms held apart from the choice ``experiments.find_segmentation`` reports.
The numbered-heading and dot-leader rules are layout, not conventions of the data set: they are
:data:`LAYOUT_RULES` (``build_pipeline(join_lines=True, layout_rules=...)``; on by default but
``list_in_sentence``, which keeps a numbered list after a colon or semicolon in its sentence), outside
that choice (chosen on the text-quality study's rules half, issue 34; on the data set they cost one labelled
sentence, a heading's "3." split off by the annotators).

:func:`sentence_spans` returns the whitespace-trimmed character spans of the
sentences; it works for both pipelines.

Bump :data:`SEGMENTER_VERSION` whenever a rule or a list of the default segmentation
changes (the line-joining rules are used by ``find`` only, whose output is not cached): it is
part of the analysis cache key (so is a digest of this file's source, so an edit that forgets the
bump still gives new cache entries).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import cast

import numpy as np
import spacy
from spacy.attrs import ORTH, SENT_START
from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc

from statinterp.text.headings import PAREN_LABEL, heading_text, is_titled

__all__ = [
    "SEGMENTER_VERSION",
    "LEGAL_ABBREVIATIONS",
    "SENTENCE_FINAL_ABBREVIATIONS",
    "STRONG_FINAL_ABBREVIATIONS",
    "WEAK_FINAL_ABBREVIATIONS",
    "DEFAULT_JOIN_RULES",
    "DEFAULT_LAYOUT_RULES",
    "JOIN_RULES",
    "LAYOUT_RULES",
    "build_pipeline",
    "lines_may_join",
    "sentence_spans",
]

SEGMENTER_VERSION = "legal-seg-2"

#: The line-joining rules (``build_pipeline(join_lines=True, join_rules=...)``), each switchable by
#: name (the module docstring describes them; none of them touches the default segmentation):
JOIN_RULES: dict[str, str] = {
    "continuation": "an unfinished line is joined to a line continuing it (a lower-case start past quotes, "
                    "brackets and labels, or a dangling label)",
    "footnote_line": "a footnote-number line between an unfinished line and a line continuing it is joined "
                     "with both",
    "attach_label": "a label and a capitalised word opening a line after an unfinished line: joined, the "
                    "label ends the sentence before it",
    "line_start_labels": "a lower-case letter label (\"b.\") and a footnote's number (\"3 A ...\") are split "
                         "off at a line start",
    "midline_labels": "a label inside a line before a capitalised word ends the sentence after the label",
    "label_after_comma": "a label after a comma (\", (ii)\", \", or (ii)\") continues the sentence",
    "glued_label": "a label glued to its first word (\"(3)Sums\") continues an unfinished line",
    "quote_end": "a closing double quote after a word ends a sentence before a capitalised word",
    "detached_quote": "a closing quote set off by a space after final punctuation opens the next sentence",
    "number_paren": "a closing parenthesis after a number ends a sentence before a capitalised word",
    "lead_word_colon": "a single word and a colon opening a line end a sentence (\"Memorandum:\"), but not before "
                       "a date ending the line (\"Dated: August 5, 2016\"), which starts a sentence after other text",
    "heading_number": "a heading line (ending with a letter) is joined to a numbered paragraph after it",
    "gerund_item": "a line ending with a semicolon is joined to a numbered item opening with a gerund",
    "colon_lower": "a line ending with a colon is joined to a line starting with a lower-case word",
    "open_word": "a line ending with a word no sentence ends with (\"the\", \"of\", \"and\") or with a hyphen "
                 "after a letter or digit is joined to the next line, whatever it starts with",
}
#: Layout rules of line-joining mode (``build_pipeline(join_lines=True, layout_rules=...)``):
#: what a heading or a table of contents is, not a sentence convention of the data set, so not among the
#: :data:`JOIN_RULES` the ablation on the labelled sentences chooses from (issue 34's fragments; their cost
#: on the data set: one labelled sentence of 1,993, the number "3." of a heading, found whole instead).
#: ``list_in_sentence`` is off in ``find`` (:data:`DEFAULT_LAYOUT_RULES`); ``build_pipeline(join_lines=True,
#: layout_rules=LAYOUT_RULES)`` turns it on.
LAYOUT_RULES: dict[str, str] = {
    "numbered_heading": "a label opening a heading line (\"(a) Bank Murders\", \"2. ASSIGNMENTS OF ERROR\") stays "
                        "with it, and no line is joined to a heading line through its label",
    "dot_leaders": "a table of contents' dot leaders before a page number end no sentence",
    "list_in_sentence": "a numbered label after a semicolon or a colon inside a line (\"...; and (2) New Star's ...\", "
                        "\"...: (1) ...\") continues the sentence: a lawyer pastes the list whole, not \"...; (2)\" "
                        "(off in find: the data set's annotators cut there)",
}
#: ``find`` uses them all but ``list_in_sentence``: the annotators of the data set end a sentence with the
#: next item's label ("...; and (2)" | "Rosen was not the broker."), and keeping such lists whole costs 7
#: exact labelled sentences (1,844 -> 1,837 of 1,993; held apart 1,837 -> 1,830, under issue 17's 92 %),
#: while it lowers issue 34's found fragments on the held-apart courts by about a quarter (reports/text_quality.md
#: at commit c51c142, where it was on, against the blind run in experiments/text_quality_notes.md).
DEFAULT_LAYOUT_RULES: frozenset[str] = frozenset(LAYOUT_RULES) - {"list_in_sentence"}
#: The rules ``find`` uses: the ones the held-apart procedure of ``experiments.find_segmentation``
#: picks on the 14 shared terms (reports/find_segmentation.md).
DEFAULT_JOIN_RULES: frozenset[str] = frozenset(JOIN_RULES)
_ALL_JOIN_RULES = frozenset(JOIN_RULES)


def join_rule_set(rules: Iterable[str] | None) -> frozenset[str]:
    """``rules`` as a set of :data:`JOIN_RULES` (or :data:`LAYOUT_RULES`) names (``None``:
    :data:`DEFAULT_JOIN_RULES`); raises ``ValueError`` naming an unknown rule."""
    if rules is None:
        return DEFAULT_JOIN_RULES
    chosen = frozenset(rules)
    unknown = sorted(chosen - _ALL_JOIN_RULES - frozenset(LAYOUT_RULES))
    if unknown:
        raise ValueError(f"unknown line-joining rule(s) {', '.join(unknown)}; known: "
                         f"{', '.join([*JOIN_RULES, *LAYOUT_RULES])}")
    return chosen

# ---------------------------------------------------------------------------
# Abbreviations
# ---------------------------------------------------------------------------
# Most abbreviations come from the lists reporters-db carries (:func:`_listed_abbreviations`:
# state abbreviations, case-name abbreviations, the words of statute and journal names). This
# list holds the rest: what those lists lack (court-document words: "Dkt.", "Decl.", "Compl." ...;
# months, titles, "v.", "Id.", "e.g.") and the listed forms whose stem is an English word
# ("Ill.", "Mass.", "Gen.", "Co."), which the derived list leaves out but which have always
# been abbreviations here. Written as they appear in text. For each entry the tokenizer gets a
# special case for the form as written and for its ALL-CAPS form (captions: "GOOGLE, INC.",
# "CASE NO. 5:17"), plus its lower-case form when the entry is lower-case already.
# Forms whose letters spell a common English word ("me.", "ill.", "mass.", "or.",
# "am.", "art." ...) are only added in the capitalisation listed, so "to me." or
# "I am." still end a sentence.
_ABBREVIATION_TEXT = """
v. vs. Id. id. Ibid. ibid. Cf. cf. e.g. i.e. viz. etc. al. seq. seqq. cert. den. rel.
n. nn. p. pp. pgs. para. paras. par. pars. ch. chs. Ch. cl. cls. Cl. Cls. art. arts. Art.
sec. secs. Sec. Secs. subd. subdiv. subsec. subch. subpt. pt. pts. Pt. tit. Tit. No. Nos.
Vol. vol. vols. ed. eds. Ed. Eds. amend. Amend. cmt. fn. fns. col. cols. op. opn.
dkt. certif. trans. affd. revd. rev. Rev. Stat. Stats.
Gen. Reg. Comp. Cons. Supp. Suppl. Pub. Priv. Res. Doc. Docs. Rep. Reps.
Rept. Rpt. Sess. Rec. Sen. Comm. Op. Ops. Opn. Atty. Ct.
Super. Commw. Misc. Div. Fed. Cl. Civ. Proc. App. Apps. Appx. Rptr.
Rul. Cum. Bull. Ltr. Dig. Jud. Interp. Juv. Prob. Fam. Mun.
Tp. Supr. Sup. Adm. Ex. Exs. Exh. Exhs. Pl. Pls. PI. Pis. Pltf. Def.
Defs. Deft. Resp. Br. Mot. Tr. Dkt. Decl. Aff. Countercl. Mem. Memo. Ord. Orig.
NO. NOS. Stip. Prelim. Inj. Opp. Oppo. Repl. Pet. Pets. Petr. Aplt. Aple. Dep. Depo. Summ. Attach.
Obj. Arb. Cr. Jt. Conf. Confid. Co. Cos. Corp. Corps. Inc. Assn. Ass. Asso.
Assocs. Ins. Mut. Nat. Natl. Intl. Fin. Sav. Bd. Dept. Emp. Emps.
Equip. Indus. Invs. Info. Prod. Prods.
Tech. Techs. Tel. Trans. Elecs. Servs. Enters. Ent. Am.
Amer. Ams. Ctrs. Cent. Contr. Pharms.
Prop. Props. Soc. Sur. Guar. Acc. Auto. Mach. Mgt. Petro. Petrol. Ref.
Refin. Med. Ag. Bus. Comm. Commn. Exch. Org. Inst. Found. Broad. Metro. Dev. Ret. Irr.
Cmdr. Admr. Exr. Exrx. Gdn. Asst. Assts. Pamph. Rem. Fut.
Mr. Mrs. Ms. Messrs. Dr. Drs. Prof. Hon. Jr. Sr. Esq. Gov. Lt. Col. Capt. Sgt. Maj. St.
Ste. Mt. Ft. Ave. Blvd. Rd. Hwy. Pkwy. Sq. JJ. CJ. C.J. P.J. J.J.
Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Sept. Oct. Nov. Dec.
Ala. Ark. Calif. Conn. Del. Ga. Haw. Ill. Ind. Kans. Ky. La.
Md. Me. Mass. Miss. Mo. Neb. Nebr. Okl. Or. Ore. Pa. Penn.
Vt. Va. Wash. Wisc. Wn. Pac. So. Nw. Wall. Cas. Eq. Sp.
Europ. Int. Intern. Stud. Chi. Mod. Q. Eng. Engl. Brit. Can.
Aust. Austl. Mex. Fr. Ger. approx. fig. Fig. figs. Figs.
"""

# Abbreviations that often end a sentence.  After one of these a boundary is made
# when the next word is a capitalised ordinary word ("... 17 U.S.C. § 101 et seq. The
# Court has ...", "... fears.” Id. Rather, ...").
STRONG_FINAL_ABBREVIATIONS = frozenset("seq. seqq. etc. id. ibid. jr. sr. esq.".split())
# Company suffixes and the like end sentences too, but are often followed by the rest
# of a name ("Co. Pension Trust", "Inc. Retirement Plan", "U.S. Supreme Court"): after
# these a boundary is made only when the next word is a typical sentence opener.
WEAK_FINAL_ABBREVIATIONS = frozenset(
    "inc. corp. co. cos. ltd. bros. l.l.c. l.l.p. l.p. llc. n.a. s.a. p.c. p.a. al. u.s.".split()
)
SENTENCE_FINAL_ABBREVIATIONS = STRONG_FINAL_ABBREVIATIONS | WEAK_FINAL_ABBREVIATIONS
_SENTENCE_OPENERS = frozenset(
    """the a an this that these those it its he she they we there here his her their our
    in on at for by from with under upon after before during since although though because
    when where while if as unless until once accordingly thus therefore moreover further
    furthermore finally first second third however nevertheless nonetheless but and or
    yet also id. ibid. id ibid see cf. similarly likewise indeed instead rather no none
    neither nor not each every all any both such other another one two three what which
    who how why whether even only many most some because in""".split()
)

# Stems that are also English words (or common names): such an entry gets a special
# case only in the capitalisation written above, never an ALL-CAPS sibling ("ILL.",
# "MASS.", "CAN." stay "ILL" + "." in an all-caps sentence).
_WORD_LIKE = frozenset(
    """me or am art ill mass miss wash con col del min max est mar dec ex ed gen la pa mo
    ind ore can ref res com bus ag fig fr eng sup sur hon prof st mt ft sq hr oz mi ave rd
    no dr doc op ord med int amer found broad wall so sp dis disc mem app rev pet trans par
    pars rem ret cent inst org prop ass dev auto fin emp sav cr nat ins mut soc tel ent acc
    reg stat comp cons pub priv rep sen comm rec br tr def aff obj arb conf jt ch cl sec pt
    tit vol misc div fed civ proc juv prob fam mun exch stud pl cas eq chi sp ne se far""".split()
)


_LISTED_FORM_RE = re.compile(r"[A-Za-z][A-Za-z'’&-]*\.")


def _english_words() -> frozenset[str]:
    """Lower-case English words: spaCy's stop words, the base forms of the lookup lemmatizer's
    index (spacy-lookups-data, which the pipeline's lemmatizer loads too) and :data:`_WORD_LIKE`."""
    from spacy.lang.en.stop_words import STOP_WORDS
    from spacy.lookups import load_lookups

    index = load_lookups("en", ["lemma_index"]).get_table("lemma_index")
    words = set(STOP_WORDS) | _WORD_LIKE
    for pos in ("noun", "verb", "adj", "adv"):
        words.update(index.get(pos, ()))
    return frozenset(words)


def _listed_abbreviations() -> frozenset[str]:
    """The one-word abbreviations (with their period) of reporters-db's lists: state
    abbreviations ("Cal.", "Tex."), case-name abbreviations ("Mortg.", "Comput.", "Transp.") and
    the words of statute and journal names ("Const.", "Admin.", "Harv."). Left out: forms of one or
    two characters (initials: dotted forms and initials are abbreviations anyway), and forms whose
    stem is an English word ("Rest.", "Coal.", "Temp.", "Law."): those end sentences in prose.
    (Reporters' own abbreviations are left to the citation rule: :func:`_inside_citation`.)"""
    import reporters_db

    names: list[str] = [*reporters_db.STATE_ABBREVIATIONS, *reporters_db.CASE_NAME_ABBREVIATIONS]
    for source in (reporters_db.LAWS, reporters_db.JOURNALS):
        for name, entries in source.items():
            names.append(name)
            for entry in entries:
                names.extend(entry.get("variations") or ())
    words = _english_words()
    return frozenset(form for name in names for form in name.split()
                     if len(form) > 2 and _LISTED_FORM_RE.fullmatch(form) and form[:-1].lower() not in words)


def _abbreviation_forms() -> list[str]:
    forms: set[str] = set()
    for entry in _ABBREVIATION_TEXT.split():
        forms.add(entry)
        if entry[:-1].lower() not in _WORD_LIKE:
            forms.add(entry.upper())
    for entry in _listed_abbreviations():
        forms.update((entry, entry.upper()))
    return sorted(forms)


LEGAL_ABBREVIATIONS: tuple[str, ...] = tuple(_abbreviation_forms())


def _known_abbreviations() -> frozenset[str]:
    from spacy.lang.en.tokenizer_exceptions import TOKENIZER_EXCEPTIONS

    spacy_forms = {
        form for form in TOKENIZER_EXCEPTIONS
        if len(form) > 1 and form.endswith(".") and any(ch.isalpha() for ch in form)
    }
    return frozenset(LEGAL_ABBREVIATIONS) | frozenset(spacy_forms)


# Every token text that counts as an abbreviation (with its period).
_ABBREVIATION_SET = _known_abbreviations()
# Case-insensitive look-up for forms that are not English words.
_ABBREVIATION_SET_LOWER = frozenset(
    a.lower() for a in _ABBREVIATION_SET if a[:-1].lower() not in _WORD_LIKE
)

# "Id" / "id" are split by spaCy's English exceptions into "I" + "d" (as in "I'd").
_EXTRA_SINGLE_TOKENS = ("Id", "id", "ID")

# ---------------------------------------------------------------------------
# Token classes (computed once per distinct token text, cached by orth hash)
# ---------------------------------------------------------------------------
(
    _OTHER,      # ordinary word, number, symbol
    _TERM,       # . ! ? and runs of them ("?!", "...", "…"), or an unknown word glued to "." ("WoW.")
    _ABBR,       # abbreviation with its period ("Supp.", "U.S.C.", "J.") that never ends a sentence
    _ABBR_END,   # abbreviation that may end a sentence ("seq.", "Inc.", "Id.")
    _OPEN,       # opening bracket or quote
    _CLOSE,      # closing bracket or quote
    _QUOTE,      # straight quote: opening or closing depending on the whitespace around it
    _NL,         # whitespace token holding a line break
    _SPACE,      # other whitespace token
    _STAR,       # "*" / "**" (star paging: "*457")
    _SECTION,    # "§", "§§", "¶", "¶¶": a citation continues
) = range(11)

_TERMINAL_CHARS = frozenset(".!?…‼‽⁇⁈⁉。｡．！？")
_OPEN_PUNCT = frozenset(["(", "[", "{", "“", "‘", "«", "‹", "„", "‚", "‘‘", "``"])
_CLOSE_PUNCT = frozenset([")", "]", "}", "”", "’", "»", "›", "’’", "''"])
_AMBIGUOUS_QUOTES = frozenset(['"', "'", "`"])
_PAGE_LINE_RE = re.compile(r"\[?\*+\d+(?:-\*?\d+)?\]?(?:\s+\[?\*+\d+(?:-\*?\d+)?\]?)*")
# List labels at the start of a line, split off when a capitalised word follows:
# "(d) In cases ...", "(1) (A) The ...", "3. The ...", "¶16 In ...".  (Lettered
# headings such as "A. Was An Effective ..." are left whole.)
_ENUMERATOR_RE = re.compile(
    rf"(?:(?:{PAREN_LABEL}[ \t]+)+"
    r"|\d{1,3}\.[ \t]+"
    r"|[\[{]?¶[ \t]*\d+[\]}]?[ \t]+)"
    r"(?=[“\"‘']?[A-Z])"
)
_ENUMERATOR_TOKEN_RE = re.compile(r"\d{1,3}|[IVXLC]{1,6}")

_LIST_HEAD = 16  # flag bit: the token may begin a list label ("(", "¶", "[", "{", a digit)
_CLASS_MASK = 15
_class_cache: dict[int, int] = {}  # token text (spaCy orth hash) -> class code; see MAX_CACHED_CLASSES
#: :func:`_token_codes` forgets its cache of token classes when it holds this many token texts, so
#: memory stays bounded over a long ingest (real case law keeps bringing new token texts).
MAX_CACHED_CLASSES = 500_000


def _is_abbreviation(text: str) -> bool:
    """``text`` ends with "." and is a known or dotted abbreviation ("U.S.C.", "J.", "e.g.")."""
    if text in _ABBREVIATION_SET or text.lower() in _ABBREVIATION_SET_LOWER:
        return True
    stem = text[:-1]
    if len(stem) == 1 and stem.isalpha():
        return True  # initial: "J.", "F."
    if "." in stem and stem[-1].isalpha():
        return True  # dotted: "U.S.C.", "S.D.N.Y.", "Ph.D." (not "1.5." or "N.E.2d.")
    return False


def _classify(text: str) -> int:
    code = _classify_token(text)
    if text[:1] in ("(", "¶", "[", "{") or text[:1].isdigit():
        code |= _LIST_HEAD
    return code


def _classify_token(text: str) -> int:
    if text.isspace():
        return _NL if ("\n" in text or "\r" in text or "\u2028" in text or "\u2029" in text) else _SPACE
    if all(ch in _TERMINAL_CHARS for ch in text):
        return _TERM
    if text in _OPEN_PUNCT:
        return _OPEN
    if text in _CLOSE_PUNCT:
        return _CLOSE
    if text in _AMBIGUOUS_QUOTES:
        return _QUOTE
    if text in ("§", "§§", "¶", "¶¶"):
        return _SECTION
    if text.strip("*") == "":
        return _STAR
    if len(text) > 1 and text.endswith(".") and any(ch.isalpha() for ch in text):
        if _is_abbreviation(text):
            return _ABBR_END if text.lower() in SENTENCE_FINAL_ABBREVIATIONS else _ABBR
        return _TERM  # an unknown word with its period kept on ("WoW.")
    return _OTHER


def _token_codes(doc: Doc) -> np.ndarray:
    """Class code (plus the ``_LIST_HEAD`` flag) of every token, one dict look-up per distinct text."""
    uniq, inverse = np.unique(doc.to_array(ORTH), return_inverse=True)
    cache = _class_cache
    if len(cache) > MAX_CACHED_CLASSES:
        cache.clear()
    ulist = uniq.tolist()
    values = [cache.get(orth) for orth in ulist]
    if None in values:
        strings = doc.vocab.strings
        for k, orth in enumerate(ulist):
            if values[k] is None:
                values[k] = cache[orth] = _classify(strings[orth])
    return np.array(values, dtype=np.uint8)[inverse.reshape(-1)]


def _first_letter_is_lower(text: str) -> bool:
    for ch in text:
        if ch.isalpha():
            return ch.islower()
        if ch.isdigit():
            return False
    return False


def _is_ordinary_capitalised(text: str) -> bool:
    """A capitalised word that is not an abbreviation or initial ("Google", "The", "A")."""
    return text[:1].isupper() and not text.endswith(".") and (len(text) == 1 or any(ch.islower() for ch in text[1:]))


def _split_off_abbreviation(prev_text: str) -> str | None:
    """The abbreviation formed by ``prev_text`` and a "." that spaCy split off, if any."""
    form = prev_text + "."
    if form in _ABBREVIATION_SET or form.lower() in _ABBREVIATION_SET_LOWER:
        return form
    # Dotted court/reporter names glued together: "N.D.Cal", "W.D.Wash", "N.J.Super".
    head, dot, last = prev_text.rpartition(".")
    if dot and head and last[:1].isupper() and last.isalpha() and len(last) <= 6:
        return form
    return None


# ---------------------------------------------------------------------------
# The boundary component
# ---------------------------------------------------------------------------


def _find_starts(doc: Doc, join_lines: bool = False,
                 rules: frozenset[str] = _ALL_JOIN_RULES | DEFAULT_LAYOUT_RULES) -> np.ndarray:
    n = len(doc)
    starts = np.zeros(n, dtype=bool)
    if n == 0:
        return starts
    starts[0] = True
    codes = _token_codes(doc)
    classes = codes & _CLASS_MASK

    # 1. A newline always ends a sentence: the token after a newline token starts one.
    nl = np.flatnonzero(classes == _NL)
    all_line_starts = np.concatenate(([0], nl + 1))
    all_line_starts = all_line_starts[all_line_starts < n]
    headings = classes if "numbered_heading" in rules else None  # the line breaks as written
    if join_lines and len(nl):
        nl = _breaking_newlines(doc, classes, nl, rules)
        classes = classes.copy()
        joined = np.setdiff1d(np.flatnonzero(classes == _NL), nl)
        classes[joined] = _SPACE  # a joined line break is ordinary whitespace from here on
        codes = (codes & ~np.uint8(_CLASS_MASK)) | classes
    line_starts = np.concatenate(([0], nl + 1))
    line_starts = line_starts[line_starts < n]
    starts[line_starts] = True

    # 2. List labels at the start of a line ("(a) It shall ...") are split off. Line joining adds the
    #    data set's list conventions: more labels at line starts, labels on joined lines and inside
    #    a line end the sentence before them (see _JOIN_ENUMERATOR_RE and the two after it).
    if join_lines:
        _enumerator_boundaries(doc, classes, line_starts.tolist(), starts,
                               _JOIN_ENUMERATOR_RE if "line_start_labels" in rules else _ENUMERATOR_RE, headings)
        joined_starts = np.setdiff1d(all_line_starts, line_starts)
        if len(joined_starts):
            _enumerator_boundaries(doc, classes, joined_starts.tolist(), starts, _ATTACH_LABEL_RE, headings)
            _enumerator_boundaries(doc, classes, joined_starts.tolist(), starts, _PARAGRAPH_NUMBER_RE, headings)
        if "midline_labels" in rules:
            _midline_label_boundaries(doc, starts, _list_goes_on(rules), "dot_leaders" in rules)
    else:
        heads = line_starts[(codes[line_starts] & _LIST_HEAD) != 0]
        if len(heads):
            _enumerator_boundaries(doc, classes, heads.tolist(), starts)

    # 3. Sentence-final punctuation and sentence-final abbreviations.
    candidates = np.flatnonzero((classes == _TERM) | (classes == _ABBR_END))
    if len(candidates):
        _punctuation_boundaries(doc, classes, candidates.tolist(), starts,
                                join_lines and "detached_quote" in rules, join_lines and "dot_leaders" in rules)
    if join_lines:
        for rule, pattern in (("quote_end", _QUOTE_END_RE), ("number_paren", _NUMBER_PAREN_END_RE),
                              ("lead_word_colon", _LEAD_WORD_COLON_RE), ("lead_word_colon", _DATE_LINE_RE)):
            if rule in rules:
                goes_on = _list_goes_on(rules) if rule == "number_paren" else ""
                unless = [re.compile(rf"[{goes_on}]{_LIST_CONJUNCTION}{_LABEL_BEFORE_PAREN}")] if goes_on else []
                _regex_starts(doc, pattern, starts, *unless)

    # 4. Star-page-marker lines ("*457", "[*12]") never form a sentence of their own.
    if (classes == _STAR).any():
        _attach_page_lines(doc, classes, nl, starts)
    return starts


def _line_ends_sentence(doc: Doc, classes: np.ndarray, first: int, last: int) -> bool:
    """Whether the line of tokens ``first..last`` (inclusive, no line break) ends a sentence.

    It does when its last token, past closing brackets and quotes, is terminal
    punctuation, a word with its period, any abbreviation ("Id.", "U.S.C.", "c.") or a
    colon (the annotated data set ends a sentence at "... are:" before a quoted list).
    """
    k = last
    while k > first and (classes[k] == _CLOSE or classes[k] == _QUOTE or classes[k] == _SPACE):
        k -= 1
    c = classes[k]
    text = doc[k].text
    return c == _TERM or c == _ABBR or c == _ABBR_END or text.endswith(".") or text.endswith(":")


# The start of a line that continues the sentence of the line before: past opening
# quotes and brackets and list labels ("(A)", "“(1)", "(A)(i)", "[a]"), a lower-case
# letter, or nothing at all after a label (a dangling "(B)").
_CONTINUATION_RE = re.compile(
    r"[“\"‘'«]*"
    r"(?:\((?:\d{1,3}|[A-Za-z]{1,4})\)(?:[ \t]+|$|(?=[(a-z]))|\[(?:\d{1,3}|[A-Za-z]{1,4})\](?:[ \t]+|$))*"
    r"[“\"‘'«\[(]*"
)
_FOOTNOTE_LINE_RE = re.compile(r"\d{1,3}")
_GLUED_LABEL_RE = re.compile(rf"[“\"‘'«]*{PAREN_LABEL}[A-Z]")


def _continues(line: str, after_footnote: bool, rules: frozenset[str] = _ALL_JOIN_RULES) -> bool:
    """Whether ``line`` (stripped) continues the sentence of an unfinished line before it.

    It does when its first letter, past opening quotes, brackets and list labels, is
    lower case ("(A) is primarily designed ...", "the failure of ...", "“precipitated
    ...") or when only a list label is left ("(B)").  After a footnote-number line any
    start but a capital letter continues ("$117,089 is attributable ...").
    """
    if "glued_label" in rules and _GLUED_LABEL_RE.match(line):
        return True  # a label glued to a capitalised word is no label to the data set: "(3)Sums paid ..."
    m = _CONTINUATION_RE.match(line)
    rest = line[m.end():] if m else line
    if not rest:
        return bool(m and m.end())
    first = rest[0]
    if first.isalpha():
        return first.islower()
    return after_footnote and not first.isspace()


_FINISHED_LINE_RE = re.compile(r"[.!?…‼‽⁇⁈⁉。｡．！？:][\"'`“”‘’«»‹›)\]}]*$")


def lines_may_join(line: str, next_line: str, rules: Iterable[str] | None = None) -> bool:
    """Whether ``build_pipeline(join_lines=True, join_rules=rules)`` can join the break between two
    lines, in any context (a cheap text test that never says no where the segmenter joins).

    Used to choose how many lines around a line to segment: a break this says no to always
    ends a sentence.
    """
    chosen = join_rule_set(rules)
    a, b = line.strip(), next_line.strip()
    if not a or not b:
        return False
    if ("colon_lower" in chosen and _colon_then_lower(a, b)) or _heading_then_number(a, b, chosen):
        return True
    if _FINISHED_LINE_RE.search(a):
        return False
    if "open_word" in chosen and _ends_open(a):
        return True
    return (bool(_FOOTNOTE_LINE_RE.fullmatch(b)) or _continues(b, bool(_FOOTNOTE_LINE_RE.fullmatch(a)), chosen)
            or ("attach_label" in chosen and bool(_ATTACH_LABEL_RE.match(b))))


# Line-joining mode only (``build_pipeline(join_lines=True)``, what ``statinterp find`` uses): the
# list-label conventions of the annotated data set. The default segmentation does not use these.
#
# At the start of a line that begins a sentence: the default labels, a lower-case letter label
# ("b. Killing ...") and a footnote's number ("3 A service-connected ...": CAP footnotes start with
# their number) are split off when a capitalised word follows. (Capital letters stay whole:
# "A. Background" is a heading; and so do quoted labels, "“(d) In cases ...", which the data set
# keeps whole after a finished sentence.)
_JOIN_ENUMERATOR_RE = re.compile(
    rf"(?:(?:{PAREN_LABEL}[ \t]+)+"
    r"|\d{1,3}\.[ \t]+"
    r"|[\[{]?¶[ \t]*\d+[\]}]?[ \t]+"
    r"|[a-z]\.[ \t]+"
    r"|\d{1,3}[ \t]+(?=[“\"‘']?[A-Z][a-z]*[\s,]))"
    r"(?=[“\"‘']?[A-Z])"
)
# A line continuing an unfinished line with a list item that starts a new sentence: a (quoted)
# parenthesised or lower-case letter label and a capitalised word ("... threats; or\n“(3)
# Substantial deterioration ...", "... potential;\nb. Killing ..."). The line break is joined and
# the label ends the sentence before it ("... threats; or “(3)" | "Substantial deterioration ...").
# This is the annotators’ convention, not a defect to fix here: 26 labelled sentences of the data set end
# with the next item's label ("...; or\n“(3)", "... equity: (1) ..., (2)"), and taking ``attach_label``,
# ``line_start_labels`` or ``midline_labels`` out loses 15, 7 and 3 exact sentences (reports/find_segmentation.md).
_ATTACH_LABEL_RE = re.compile(rf"[“\"‘']*(?:(?:{PAREN_LABEL}[ \t]+)+|[a-z]\.[ \t]+)(?=[“\"‘']?[A-Z])")
# The same inside a line: parenthesised labels (a number, a letter or a Roman numeral; "(1)(A)")
# between words, before a capitalised word, end the sentence after the label ("... spreads: (1)" |
# "Those transactions ...", "...; and (2)" | "Dillinger has ...").
_MIDLINE_LABEL_RE = re.compile(
    r"(?<=[^\s])[ \t]+[“\"‘']?(?:\((?:\d{1,3}|[A-Za-z]|[ivx]{1,5}|[IVX]{1,5})\))+[ \t]+(?=[“\"‘']?[A-Z][a-z])")


# A label after a comma (", (ii)", ", or (ii)") continues a list inside the sentence ("... based on the
# participant's (i) final average compensation, (ii) Social Security benefit, and (iii) ...": layout rule
# ``label_after_comma``); so does one after a semicolon or a colon by the rule ``list_in_sentence`` ("...;
# and (2) New Star's ..."). The punctuation each rule lets a list go on after:
_LIST_PUNCTUATION = (("label_after_comma", ","), ("list_in_sentence", ";:"))
_LIST_CONJUNCTION = r"(?:[ \t]+(?:or|and))?"


def _list_goes_on(rules: frozenset[str]) -> str:
    """The punctuation after which a list label goes on with its sentence under ``rules`` ("", ",", ";:", ",;:")."""
    return "".join(chars for rule, chars in _LIST_PUNCTUATION if rule in rules)


# A line ending a heading (with a letter) followed by a numbered paragraph ("... Toner Loading Programs\n72.
# SCC admits ...") is joined, the number staying with the heading ("... Programs 72." | "SCC admits ...");
# so is a line ending with a colon followed by a lower-case word ("The statute defines a mask work as:\na
# series of related images ...").
_PARAGRAPH_NUMBER_JOIN_RE = re.compile(r"\d{1,3}\.(?:[ \t]+)?(?=[“\"‘']?[A-Z])")
_LOWER_WORD_RE = re.compile(r"[a-z]+(?=[\s,;]|$)")
_PARAGRAPH_NUMBER_RE = re.compile(r"\d{1,3}\.[ \t]+(?=[“\"‘']?[A-Z])")


# After a line ending with a semicolon, a numbered item that opens with a gerund continues a list of acts
# ("... enjoined from: ...;\n4. Using SCEA's trademarks ..."): joined, the number staying with the line before.
_GERUND_ITEM_RE = re.compile(r"\d{1,3}\.[ \t]+[A-Z][a-z]+ing\b")


def _heading_then_number(line: str, next_line: str, rules: frozenset[str] = _ALL_JOIN_RULES) -> bool:
    """``line`` (stripped) ends with a letter and ``next_line`` starts with a paragraph number and a capital
    (rule ``heading_number``), or ``line`` ends with a semicolon and ``next_line`` is a numbered item opening
    with a gerund (rule ``gerund_item``)."""
    if "gerund_item" in rules and line.endswith(";") and _GERUND_ITEM_RE.match(next_line):
        return True
    if "heading_number" not in rules or not line[-1:].isalpha():
        return False
    m = _PARAGRAPH_NUMBER_JOIN_RE.match(next_line)
    # not to a numbered heading ("2. ANALYSIS")
    return m is not None and not ("numbered_heading" in rules and _is_heading(next_line[m.end():]))


# Words no sentence ends with: articles, prepositions, conjunctions and determiners. A line ending
# with one (and no punctuation) was cut mid-sentence (a page break, a caption or a quotation set off:
# "... in her official capacity as Governor of the" | "State of Maine", "At the" | "Court of Appeals").
_OPEN_WORDS = frozenset("""a an the of to in on at by for with from into onto under upon than and or nor but
    whether because although though if as its their his her our your my this that these those which whose
    between among against about through without within during per via""".split())
_OPEN_END_RE = re.compile(r"(?:(?<![\w.])([A-Za-z]+)|[A-Za-z0-9]-)$")


def _ends_open(line: str) -> bool:
    """``line`` (stripped) ends with a word of :data:`_OPEN_WORDS` or a hyphen after a letter or digit
    ("a 10-", "2021-"). A line that is that word alone is a heading's label ("A" above "We agree
    ..."), not a cut sentence."""
    m = _OPEN_END_RE.search(line)
    if m is None:
        return False
    return m.group(1) is None or (m.group(1).lower() in _OPEN_WORDS and m.start() > 0)


def _colon_then_lower(line: str, next_line: str) -> bool:
    """``line`` (stripped) ends with a colon and ``next_line`` starts with a lower-case word (not a label, "b.")."""
    return line.endswith(":") and bool(_LOWER_WORD_RE.match(next_line))


# A table of contents' dot leader and page number before a label ("Background...... 276 (a) Bank Murders"):
# the label numbers the next entry, it ends no sentence.
_LEADER_PAGE_RE = re.compile(r"\.{5}[ \t]*\d{1,4}$")


def _midline_label_boundaries(doc: Doc, starts: np.ndarray, goes_on: str = ",", leaders: bool = False) -> None:
    """A sentence starts after each list label inside a line (:data:`_MIDLINE_LABEL_RE`), but not after one of
    the characters ``goes_on`` (:func:`_list_goes_on`: "," and, by the rule ``list_in_sentence``, ";" and ":")."""
    text = doc.text
    before = re.compile(rf"[{goes_on}]{_LIST_CONJUNCTION}$") if goes_on else None
    _starts_at(doc, [m.end() for m in _MIDLINE_LABEL_RE.finditer(text)
                     if not (before and before.search(text, max(0, m.start() - 8), m.start()))
                     and not (leaders and _LEADER_PAGE_RE.search(text, max(0, m.start() - 16), m.start()))],
               starts)


def _breaking_newlines(doc: Doc, classes: np.ndarray, nl: np.ndarray,
                       rules: frozenset[str] = _ALL_JOIN_RULES) -> np.ndarray:
    """The line-break tokens that still end a sentence when lines are joined.

    A single line break is joined (treated as a space) when the line before it does
    not end a sentence (:func:`_line_ends_sentence`) and the line after it continues
    it (:func:`_continues`): statute text quoted as a list ("... that—\n(A) is
    primarily designed ...;\n(B) has only ...") and sentences interrupted by a
    footnote-number line ("... on board,\n10\nthe failure ..."; the number line is
    joined with both neighbours).  A line that starts with a list label and a capitalised
    word (:data:`_ATTACH_LABEL_RE`, "...; or\n(3) Substantial ...") is joined too: the label
    ends the sentence before it (:func:`_find_starts` splits after it).  Blank lines (two or
    more line breaks) always end a sentence.
    """
    n = len(doc)
    text = doc.text
    bounds = nl.tolist()
    # Character extent of every line: line k runs from tokens line_first[k] to line_last[k].
    line_first = [0] + [i + 1 for i in bounds]
    line_last = [i - 1 for i in bounds] + [n - 1]

    def line_text(k: int) -> str:
        first, last = line_first[k], line_last[k]
        if first > last or first >= n:
            return ""
        return text[doc[first].idx : doc[last].idx + len(doc[last].text)].strip()

    lines = [line_text(k) for k in range(len(line_first))]
    keep = []
    for k, i in enumerate(bounds):
        if doc[i].text.count("\n") > 1 or not lines[k] or not lines[k + 1]:
            keep.append(i)  # a blank line, or an empty line around this break
            continue
        footnotes = "footnote_line" in rules
        if footnotes and _FOOTNOTE_LINE_RE.fullmatch(lines[k + 1]) and k + 2 < len(lines):
            # the next line is a footnote number: join it when the line after it continues
            unfinished = not _line_ends_sentence(doc, classes, line_first[k], line_last[k])
            join = unfinished and bool(lines[k + 2]) and _continues(lines[k + 2], True, rules)
        elif footnotes and _FOOTNOTE_LINE_RE.fullmatch(lines[k]) and k > 0 and lines[k - 1]:
            # this line is a footnote number: same decision as the break before it
            unfinished = not _line_ends_sentence(doc, classes, line_first[k - 1], line_last[k - 1])
            join = unfinished and _continues(lines[k + 1], True, rules)
        else:
            unfinished = not _line_ends_sentence(doc, classes, line_first[k], line_last[k])
            join = unfinished and (("continuation" in rules and _continues(lines[k + 1], False, rules))
                                   or ("open_word" in rules and _ends_open(lines[k]))
                                   or ("attach_label" in rules and bool(_ATTACH_LABEL_RE.match(lines[k + 1]))
                                       and not ("numbered_heading" in rules
                                                and (_is_heading_line(lines[k]) or _is_heading_line(lines[k + 1])))))
            if not join:
                join = (_heading_then_number(lines[k], lines[k + 1], rules)
                        or ("colon_lower" in rules and _colon_then_lower(lines[k], lines[k + 1])))
        if not join:
            keep.append(i)
    return np.array(keep, dtype=nl.dtype)


def _line_prefix(doc: Doc, classes: np.ndarray, s: int, max_tokens: int) -> tuple[str, list[int]]:
    """Text of up to ``max_tokens`` tokens from ``s`` (stopping at a line break) and their end offsets."""
    n = len(doc)
    pieces: list[str] = []
    ends: list[int] = []
    length = 0
    k = s
    while k < n and k < s + max_tokens and classes[k] != _NL:
        piece = doc[k].text_with_ws
        pieces.append(piece)
        length += len(piece)
        ends.append(length)
        k += 1
    return "".join(pieces), ends


# Headings have one home, statinterp.text.headings: the segmenter's numbered-heading rules use the
# titled test ("(a) Bank Murders", "2. ASSIGNMENTS OF ERROR"), as they always have.
_is_heading = is_titled


def _is_heading_line(line: str) -> bool:
    """Whether ``line`` is a titled heading, past a label ("4. ANALYSIS AND RESOLUTION", "(a) Ex Post Facto Claim")."""
    return is_titled(heading_text(line))


def _line_text(doc: Doc, classes: np.ndarray, s: int) -> str:
    """The text of the line starting at token ``s`` (up to the next line-break token of ``classes``)."""
    n = len(doc)
    e = s
    while e < n and classes[e] != _NL:
        e += 1
    return doc.text[doc[s].idx:doc[e - 1].idx + len(doc[e - 1].text)] if e > s else ""


def _enumerator_boundaries(doc: Doc, classes: np.ndarray, heads: list[int], starts: np.ndarray,
                           pattern: re.Pattern[str] = _ENUMERATOR_RE, lines: np.ndarray | None = None) -> None:
    """A sentence starts after the list label (``pattern``) opening the line at each of ``heads``; with
    ``lines`` (the classes of the text as written), not when the rest of its line is a heading."""
    match = pattern.match
    for s in heads:
        prefix, ends = _line_prefix(doc, classes, s, 12)
        m = match(prefix)
        if m is None:
            continue
        if lines is not None and _is_heading(_line_text(doc, lines, s)[m.end():]):
            continue  # "(a) Bank Murders", "2. ASSIGNMENTS OF ERROR": a numbered heading stays whole
        # token boundary at m.end(): the token after the one whose text_with_ws ends there
        for k, end in enumerate(ends):
            if end == m.end():
                if s + k + 1 < len(doc):
                    starts[s + k + 1] = True
                break


def _attach_page_lines(doc: Doc, classes: np.ndarray, nl: np.ndarray, starts: np.ndarray) -> None:
    n = len(doc)
    line_starts = np.concatenate(([0], nl + 1))
    line_ends = np.concatenate((nl, [n]))  # exclusive; the newline token itself is excluded
    star_lines = np.unique(np.searchsorted(line_starts, np.flatnonzero(classes == _STAR), side="right") - 1)
    for k in star_lines.tolist():
        s, e = int(line_starts[k]), int(line_ends[k])
        if s >= e or e - s > 40:
            continue
        line, _ = _line_prefix(doc, classes, s, e - s)
        if not _PAGE_LINE_RE.fullmatch(line.strip()):
            continue
        starts[s + 1 : e] = False
        if s > 0:
            starts[s] = False  # glue to the sentence before (the line break stays inside it)
        elif e + 1 < n:
            starts[e + 1] = False  # first line of the doc: glue the next line to it instead


# Line-joining mode only: in-line boundaries of the annotated data set (see the module docstring).
# A closing double quote after a word (not after a comma, a colon or final punctuation, nor after a
# closing single quote that follows one: the punctuation rules decide there, as in '“ ‘strict in theory,
# but fatal in fact,’ ” Adarand, supra'), before a capitalised word ('... protected under”' | 'Title 17,
# whereas ...', 'to “deem”' | 'Dowling to have ...', '... known as ‘Wild Horse Valley/ ”' | 'Id.'); not after
# a bracketed alteration, which a quoted word in mid-sentence ends with ('... in a way that “tag[s]” Congress').
_QUOTE_END_RE = re.compile(r"(?:(?<=[^\s,;:.!?…’'\]])|(?<=[^\s,;:.!?…][’']))[ \t]?”[ \t]+(?=[A-Z])")
# A line that opens with a single word and a colon, before a capitalised word ("Memorandum:" | "This
# action arises ...", "dissenting:" | "The prevailing opinion ...").
# Not before a date: a "Dated: August 5, 2016" line is one line, whole.
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE_LINE_REST = rf"(?:{_MONTHS})[ \t]+\d{{1,2}},[ \t]+\d{{4}}[ \t]*(?:$|(?=\n))"
_LEAD_WORD_COLON_RE = re.compile(rf"(?:^|(?<=\n))[A-Za-z]+:[ \t]+(?=[A-Z])(?!{_DATE_LINE_REST})")
# A participle ("Dated", "Filed"), a colon and a date ending a line that goes on from other text start a
# sentence of their own: a signature's date glued to the order before it ("IT IS SO ORDERED" | "Dated: August
# 5, 2016"; not "Filing Date: June 13, 2011").
_DATE_LINE_RE = re.compile(rf"(?<=[^\s])[ \t]+(?=[A-Z][a-z]+ed:[ \t]+{_DATE_LINE_REST})")
# A closing parenthesis after a number, before a capitalised word: the end of a citation or of a numbered
# label ('... Conant Dep. at 104)' | 'Plaintiffs criticism ...', '“(2)' | 'Does the will ...').
_NUMBER_PAREN_END_RE = re.compile(r"(?<=[0-9])\)[ \t]+(?=[A-Z][a-z])")
# ... but a numbered label after a comma goes on with the list it is in (rule ``label_after_comma``: "... to
# (1) Joric Pang, (2) Lily Pang, and (3) Campbell Land Company ..."; :func:`_list_goes_on`): the text before
# the closing parenthesis ends with the label's opening.
_LABEL_BEFORE_PAREN = r"[ \t]+[“\"‘']?\(\d{1,3}$"
# Closing quotes that open the next sentence when a space sets them off from a sentence's final punctuation.
_DETACHED_QUOTES = frozenset(["”", "’", "’’", "''", '"', "'"])


# Citations. A "." boundary right after a capitalised word with its period ("... Marl." | "Veh.
# Code", "... Cal. Veh." | "Code § 21200", "212 Marl." | "App. 341") is checked against the
# citations of its line (:func:`_inside_citation`); elsewhere no citation can hold the boundary.
_ABBREVIATED_END = re.compile(r"(?<![A-Za-z'’])[A-Z][A-Za-z'’&-]{0,7}\.[ \t]+$")
_DIGIT_OR_SECTION = re.compile(r"[0-9§]")


@functools.cache
def _code_words() -> str:
    """The words that end a statute's name before its section in reporters-db's statute patterns
    ("Code", "Law": "Cal. $law_subject Code § ...") and its statute names' last words ("Laws",
    "Rules"), as a regular-expression alternation."""
    import reporters_db

    words = {"Code", "Law", "Laws"}
    for name, entries in reporters_db.LAWS.items():
        last = name.split()[-1]
        if last.isalpha() and last[:1].isupper() and len(name.split()) > 1:
            words.add(last)
        for entry in entries:
            for pattern in entry.get("regexes") or ():
                m = re.search(r"\$law_subject ((?:[A-Z][a-z]+ ?)+)", pattern)
                if m:
                    words.update(m.group(1).split())
    return "|".join(sorted(words, key=lambda w: (-len(w), w)))


_CODE_WORD_SET = frozenset(_code_words().split("|"))
# Words that open a sentence rather than go on with a citation ("Id.", "Cf.", "Mr.").
_NOT_IN_CITATIONS = _SENTENCE_OPENERS | SENTENCE_FINAL_ABBREVIATIONS | frozenset("mr. mrs. ms. dr. messrs.".split())
_CITE_WORD = r"[A-Z][A-Za-z'’&-]{0,11}\."
# The rest of a statute's name up to its section mark ("Veh. Code § 21.200", "& Traf. Law § 125",
# "Code Civ. Proc. § 1060"), after the first word of the name: the shape of reporters-db's statute
# patterns ("$state $law_subject Code § $law_section"), whatever the state (eyecite knows only real
# ones; the example data's state is "Marl.").
_STATUTE_REST = re.compile(rf"(?:(?:{_CITE_WORD}|&|(?:{_code_words()})\b)[ \t]+){{1,6}}§")
# A volume and the reporter's first words before the boundary ("212 Marl. "), then the rest of the
# reporter and a page after it ("App. 341", "655,", "App. 4th 1"): the shape of reporters-db's
# ``$volume $reporter,? $page``.
_VOLUME_BEFORE = re.compile(rf"(?<![\w.,])[1-9]\d{{0,3}}[ \t]+(?:{_CITE_WORD}[ \t]+){{1,3}}$")
# What a citation can go on with after the boundary: a capitalised word with its period, "&", a
# code word, a number or a section mark (a new sentence opens with an ordinary word).
_CITATION_GOES_ON = re.compile(rf"(?:{_CITE_WORD}|&|(?:{_code_words()})\b|[0-9§])")
_PAGE_AFTER = re.compile(rf"(?:(?:{_CITE_WORD}|\d{{1,2}}(?:st|nd|rd|th|d))[ \t]+){{0,4}}\d+(?=[,;:.)\s]|$)")


def _may_go_on_as_citation(doc: Doc, cls: bytes, i: int, j: int, word: str) -> bool:
    """The cheap test before :func:`_inside_citation`, on the tokens at hand: the boundary's period
    ``i`` ends a capitalised word of up to nine characters ("Marl.", "Veh", "Cal."), and the word ``j``
    after it is a number, "&", a code word ("Code") or a capitalised word with its period."""
    if cls[i] == _ABBR_END:
        stem, first = doc[i].text, i
    elif i > 0:
        stem, first = doc[i - 1].text, i - 1
    else:
        return False
    if not (stem[:1].isupper() and len(stem) <= 9):
        return False
    if word[:1].isdigit():  # a page: only after a volume and a reporter ("231 Marl. 655", not "the Act. 7 U.S.C.")
        return any(t.text[:1].isdigit() for t in doc[max(0, first - 4):first])
    if word == "&" or word in _CODE_WORD_SET:
        return True
    return (word[:1].isupper() and len(word) <= 13 and word.lower() not in _NOT_IN_CITATIONS
            and (word.endswith(".") or (j + 1 < len(doc) and cls[j + 1] == _TERM and not doc[j].whitespace_)))


def _inside_citation(doc: Doc, cls: bytes, j: int) -> bool:
    """Whether a sentence starting at token ``j`` would split a citation: one eyecite finds in the
    line (a case, statute or journal citation: :func:`~statinterp.text.citations.stored_citations`),
    or one of the shapes of reporters-db's patterns for a state or reporter eyecite does not know
    (:data:`_STATUTE_REST`, :data:`_VOLUME_BEFORE` + :data:`_PAGE_AFTER`). Only looked at (and
    eyecite only run) where a capitalised word and its period end the sentence before and the text
    after goes on as a citation can (:data:`_CITATION_GOES_ON`) to a digit or a section mark close
    by: all a few tokens' text, never the document's."""
    nl = bytes([_NL])
    line_start = cls.rfind(nl, 0, j) + 1
    line_end = cls.find(nl, j)
    line_end = len(cls) if line_end < 0 else line_end
    before = "".join(t.text_with_ws for t in doc[max(line_start, j - 8):j])
    if not _ABBREVIATED_END.search(before):
        return False
    after = "".join(t.text_with_ws for t in doc[j:min(line_end, j + 16)])
    if not _CITATION_GOES_ON.match(after) or not _DIGIT_OR_SECTION.search(after, 0, 60):
        return False
    if _STATUTE_REST.match(after):
        return True
    if _VOLUME_BEFORE.search(before) and _PAGE_AFTER.match(after):
        return True
    line = doc[line_start:line_end]
    at = doc[j].idx - line.start_char
    return any(a < at < b for a, b in _line_citation_spans(line.text))


def _line_citation_spans(line: str) -> tuple[tuple[int, int], ...]:
    """The spans of eyecite's citations in ``line`` (memoised with ingest's own look-up of each
    paragraph's citations: :func:`~statinterp.text.citations.cached_stored_citations`)."""
    from statinterp.text.citations import cached_stored_citations

    return tuple((c.start, c.end) for c in cached_stored_citations(line))


def _regex_starts(doc: Doc, pattern: re.Pattern[str], starts: np.ndarray, *unless_before: re.Pattern[str]) -> None:
    """A sentence starts at the end of each match of ``pattern`` in the text (when a token starts there),
    but not where one of ``unless_before`` matches the text just before the match (it ends there)."""
    text = doc.text
    _starts_at(doc, [m.end() for m in pattern.finditer(text)
                     if not any(u.search(text, max(0, m.start() - 24), m.start()) for u in unless_before)],
               starts)


def _starts_at(doc: Doc, offsets: list[int], starts: np.ndarray) -> None:
    if not offsets:
        return
    idx = doc.to_array("IDX")
    for offset in offsets:
        k = int(np.searchsorted(idx, offset))
        if k < len(doc) and idx[k] == offset:
            starts[k] = True


#: A run of at least this many periods before a number is a table of contents' dot leader
#: ("Background........ 276 (a) Bank Murders...... 277"), not the end of a sentence (an ellipsis
#: and a period make four).
_LEADER_DOTS = 5


def _followed_by_number(doc: Doc, cls: bytes, j: int) -> bool:
    """Whether the first token from ``j`` past spaces (on the same line) starts with a digit."""
    n = len(doc)
    while j < n and cls[j] == _SPACE:
        j += 1
    return j < n and doc[j].text[:1].isdigit()


def _punctuation_boundaries(doc: Doc, classes: np.ndarray, candidates: list[int], starts: np.ndarray,
                            join_lines: bool = False, leaders: bool = False) -> None:
    n = len(doc)
    cls = classes.tobytes()  # fast per-item access (ints)
    last = -1
    for i in candidates:
        if i <= last:
            continue  # part of a run already handled ("?!", ". . .")
        tok = doc[i]
        abbreviation = None
        if cls[i] == _ABBR_END:
            abbreviation = tok.text.lower()
        elif i > 0 and (tok.text == "." or tok.text == ".."):
            prev = doc[i - 1]
            if not prev.whitespace_:
                if i == 1 or cls[i - 2] == _NL:
                    if _ENUMERATOR_TOKEN_RE.fullmatch(prev.text):
                        continue  # line-start "3." (rule 2 decides) or "II." heading: no boundary here
                if cls[i - 1] == _ABBR or cls[i - 1] == _ABBR_END:
                    form: str | None = prev.text  # doubled period: "Nov.." (the abbreviation decides)
                else:
                    form = _split_off_abbreviation(prev.text)
                if form is not None:
                    abbreviation = form.lower()
                    if abbreviation not in SENTENCE_FINAL_ABBREVIATIONS:
                        continue
        # Skip what still belongs to the ending sentence: more terminal punctuation,
        # closing brackets and quotes, a star-page marker glued on ("*457").
        j = i + 1
        detached = False
        while j < n:
            cj = cls[j]
            if (join_lines and cls[j - 1] == _TERM and doc[j - 1].whitespace_
                    and ((cj == _CLOSE and doc[j].text in _DETACHED_QUOTES)
                         or (cj == _QUOTE and (doc[j].whitespace_ or j + 1 == n)))):
                detached = True
                break
            if cj == _TERM or cj == _CLOSE:
                j += 1
            elif cj == _QUOTE and not doc[j - 1].whitespace_:
                j += 1  # a straight quote glued to the punctuation closes the sentence
            elif cj == _STAR and j + 1 < n and not doc[j].whitespace_ and doc[j + 1].text.isdigit():
                j += 2
            else:
                break
        last = j - 1
        if leaders and len(tok.text) >= _LEADER_DOTS and tok.text.strip(".") == "" and _followed_by_number(doc, cls, j):
            continue  # dot leaders of a table of contents ("Background........ 276"): no sentence ends
        if detached:
            # a closing quote set off by a space after the final punctuation opens the next sentence
            # ('... the copyright owner.... ”' | '” 17 U.S.C. § 1201(3)(A).'), unless a sentence opener
            # follows it ('... this title.... ” Although ...': then it closes this sentence)
            nxt = j + 1
            while nxt < n and cls[nxt] == _SPACE:
                nxt += 1
            if not (nxt < n and cls[nxt] == _OTHER and doc[nxt].text.lower() in _SENTENCE_OPENERS):
                starts[j] = True
                continue
            j += 1  # before a sentence opener the quote closes the ending sentence
            last = j - 1
        while j < n and cls[j] == _SPACE:
            j += 1
        if j >= n or cls[j] == _NL:
            continue  # the line break (rule 1) or the end of the text ends the sentence
        if not doc[j - 1].whitespace_ and cls[j - 1] != _SPACE:
            continue  # nothing between: "1.5", "Jan.18", "word.Next" (OCR) - no boundary
        cj = cls[j]
        if cj == _SECTION:
            continue  # a bare "§ 1201(a)(3)." after a quotation is its citation
        # The first word of the candidate sentence, past opening brackets and quotes.
        k = j
        while k < n and (cls[k] == _OPEN or cls[k] == _QUOTE):
            k += 1
        if k >= n or cls[k] == _NL:
            continue
        word = doc[k].text
        if _first_letter_is_lower(word):
            continue  # "p. 5", ". . . may require", "cert. denied"
        if abbreviation is not None:
            if k != j:
                continue  # "Inc. (Colt)", "etc. (Matter of ...)"
            lower = word.lower()
            if abbreviation in STRONG_FINAL_ABBREVIATIONS:
                if not (_is_ordinary_capitalised(word) or lower in _SENTENCE_OPENERS):
                    continue
            elif lower not in _SENTENCE_OPENERS:
                continue
        if k == j and _may_go_on_as_citation(doc, cls, i, j, word) and _inside_citation(doc, cls, j):
            continue  # "... Marl." | "Veh. Code § 21.200": a citation goes on
        starts[j] = True


@Language.component("legal_sentence_boundaries")
def legal_sentence_boundaries(doc: Doc) -> Doc:
    """Set sentence starts with the legal rules (see the module docstring)."""
    if len(doc) == 0:
        return doc
    starts = _find_starts(doc)
    values = np.where(starts, 1, -1).astype(np.int64).astype(np.uint64)
    # spaCy's stub wants a thinc Ints2d; a 1-D uint64 array for one attribute is what it takes
    doc.from_array([SENT_START], values)  # type: ignore[arg-type]
    return doc


class JoinedBoundaries:
    """The legal rules with line joining (``build_pipeline(join_lines=True)``), the line-joining
    rules ``rules`` (names of :data:`JOIN_RULES`) switched on."""

    def __init__(self, rules: frozenset[str]):
        self.rules = rules

    def __call__(self, doc: Doc) -> Doc:
        if len(doc) == 0:
            return doc
        starts = _find_starts(doc, join_lines=True, rules=self.rules)
        values = np.where(starts, 1, -1).astype(np.int64).astype(np.uint64)
        # spaCy's stub wants a thinc Ints2d; a 1-D uint64 array for one attribute is what it takes
        doc.from_array([SENT_START], values)  # type: ignore[arg-type]
        return doc


@Language.factory("legal_sentence_boundaries_joined", default_config={"rules": None})
def legal_sentence_boundaries_joined(nlp: Language, name: str, rules: list[str] | None) -> JoinedBoundaries:
    """The ``legal_sentence_boundaries_joined`` component: :class:`JoinedBoundaries` with ``rules``
    (``None``: :data:`DEFAULT_JOIN_RULES` and :data:`DEFAULT_LAYOUT_RULES`)."""
    return JoinedBoundaries(join_rule_set(rules) if rules is not None else DEFAULT_JOIN_RULES | DEFAULT_LAYOUT_RULES)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def _add_special_cases(nlp: Language) -> None:
    tokenizer = cast(Tokenizer, nlp.tokenizer)  # blank("en")'s tokenizer (the stub also allows a plain callable)
    for form in LEGAL_ABBREVIATIONS + _EXTRA_SINGLE_TOKENS:
        if [t.text for t in tokenizer(form)] != [form]:
            tokenizer.add_special_case(form, [{ORTH: form}])


def build_pipeline(legal_rules: bool = True, join_lines: bool = False,
                   join_rules: Iterable[str] | None = None, layout_rules: Iterable[str] | None = None) -> Language:
    """Blank English pipeline with a lookup lemmatizer and sentence segmentation.

    ``legal_rules=False`` gives plain spaCy: ``spacy.blank("en")`` + lookup
    ``lemmatizer`` + ``sentencizer``.  ``legal_rules=True`` adds the tokenizer special
    cases for legal abbreviations and uses ``legal_sentence_boundaries`` instead of the
    sentencizer.  ``join_lines=True`` uses ``legal_sentence_boundaries_joined`` with the
    line-joining rules ``join_rules`` (names of :data:`JOIN_RULES`; ``None``:
    :data:`DEFAULT_JOIN_RULES`; ``ValueError`` for an unknown name) and the layout rules
    ``layout_rules`` (names of :data:`LAYOUT_RULES`; ``None``: :data:`DEFAULT_LAYOUT_RULES`).
    """
    chosen = join_rule_set(join_rules)
    layout = DEFAULT_LAYOUT_RULES if layout_rules is None else frozenset(layout_rules)
    if layout - frozenset(LAYOUT_RULES):
        raise ValueError(f"unknown layout rule(s) {', '.join(sorted(layout - frozenset(LAYOUT_RULES)))}; known: "
                         f"{', '.join(LAYOUT_RULES)}")
    nlp = spacy.blank("en")
    nlp.add_pipe("lemmatizer", config={"mode": "lookup"})
    if legal_rules:
        _add_special_cases(nlp)
        if join_lines:
            nlp.add_pipe("legal_sentence_boundaries_joined", config={"rules": sorted(chosen | layout)})
        else:
            nlp.add_pipe("legal_sentence_boundaries")
    else:
        nlp.add_pipe("sentencizer")
    nlp.initialize()
    return nlp


def sentence_spans(doc: Doc) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of each sentence of ``doc``, trimmed of whitespace.

    Sentences that hold only whitespace are left out.
    """
    text = doc.text
    spans: list[tuple[int, int]] = []
    for sent in doc.sents:
        start = sent.start_char
        end = sent.end_char
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans
