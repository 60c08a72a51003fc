"""How far eyecite's citations (stored by ``statinterp ingest``) agree with the regexes of the
learned features' ``citations`` family (``statinterp.learned.sentence_patterns``).

    python -m experiments.citation_agreement --data ../shared/data/statutory_interpretation \
        [--out reports/citation_agreement.md]

For every labelled sentence of every term (and for its paragraph): does it cite a statute, a
case, the term's own provision? -- once by the regexes (``cites_statute``, ``cites_case``,
``cites_provision``), once by eyecite (``FullLawCitation``; ``FullCaseCitation`` /
``ShortCaseCitation`` as the collection stores them, and with ``Id.`` / ``supra`` as well;
a ``FullLawCitation`` whose section is the provision's). Reported: the 2×2 counts, agreement,
Cohen's kappa, and the mean gain of the sentences each method flags (a hint of which signal
carries more about the labels; whether the learned ranker should switch is left to a
leave-one-term-out run, not done here).
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib.metadata import version
from pathlib import Path

from experiments.common import DEFAULT_DATA, log

CASE_KINDS = {"FullCaseCitation", "ShortCaseCitation"}
CASE_KINDS_ALL = CASE_KINDS | {"IdCitation", "SupraCitation"}


def eyecite_flags(text: str, section: str) -> dict[str, bool]:
    from eyecite import get_citations

    kinds = []
    provision = False
    for c in get_citations(text):
        name = type(c).__name__
        kinds.append(name)
        if name == "FullLawCitation" and section and str(c.groups.get("section", "")).split("(")[0] == section:
            provision = True
    return {"statute": "FullLawCitation" in kinds, "case": any(k in CASE_KINDS for k in kinds),
            "case_all": any(k in CASE_KINDS_ALL for k in kinds), "provision": provision}


def regex_flags(text: str, citation: str) -> dict[str, bool]:
    from statinterp.learned.sentence_patterns import cites_case, cites_provision, cites_statute

    sec, full = cites_provision(text, citation) if citation else (False, False)
    return {"statute": cites_statute(text), "case": cites_case(text), "provision": bool(sec or full)}


def kappa(a: int, b: int, c: int, d: int) -> float:
    """Cohen's kappa of a 2×2 table [[both, regex only], [eyecite only, neither]]."""
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.citation_agreement", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    logging.getLogger("eyecite").setLevel(logging.ERROR)
    from statinterp.learned.sentence_patterns import citation_parts
    from statinterp.workflow import open_corpus

    corpus = open_corpus(args.data)
    rows = []
    for term in corpus:
        citation = term.provision.citation if term.provision is not None else ""
        section = citation_parts(citation)[2]
        log(f"{term.key}: {len(term.sentences)} sentences")
        for s in term.sentences:
            if s.gain is None:
                continue
            para = term.paragraphs[s.paragraph_id].text
            rows.append((s.gain, regex_flags(s.text, citation), eyecite_flags(s.text, section),
                         regex_flags(para, citation), eyecite_flags(para, section)))
    lines = ["# Citations: eyecite against the learned features' regexes", "",
             f"Command: `python -m experiments.citation_agreement {' '.join(argv or sys.argv[1:])}`".replace(
                 str(args.data), "../shared/data/statutory_interpretation"),
             "", f"Versions: eyecite {version('eyecite')}, statinterp {version('statinterp')}, "
             f"Python {sys.version.split()[0]}.",
             "", f"{len(rows)} labelled sentences of {len(corpus)} terms.", "",
             "| unit | signal | both | regex only | eyecite only | neither | agreement | kappa | "
             "mean gain: regex flags | eyecite flags | neither flags |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for unit, (ri, ei) in (("sentence", (1, 2)), ("paragraph", (3, 4))):
        for sig, esig in (("statute", "statute"), ("case", "case"), ("case", "case_all"), ("provision", "provision")):
            a = sum(1 for r in rows if r[ri][sig] and r[ei][esig])
            b = sum(1 for r in rows if r[ri][sig] and not r[ei][esig])
            c = sum(1 for r in rows if not r[ri][sig] and r[ei][esig])
            d = len(rows) - a - b - c

            def mean(flags: list[bool]) -> str:
                g = [r[0] for r, f in zip(rows, flags, strict=True) if f]
                return f"{sum(g) / len(g):.2f} ({len(g)})" if g else "-"

            by_regex = [r[ri][sig] for r in rows]
            by_eyecite = [r[ei][esig] for r in rows]
            by_neither = [not x and not y for x, y in zip(by_regex, by_eyecite, strict=True)]

            label = sig if esig == sig else f"{sig} (eyecite with Id./supra)"
            lines.append(f"| {unit} | {label} | {a} | {b} | {c} | {d} | {(a + d) / len(rows):.1%} | "
                         f"{kappa(a, b, c, d):.2f} | {mean(by_regex)} | {mean(by_eyecite)} | {mean(by_neither)} |")
    lines += ["", "Gains: high value 3, certain value 2, potential value 1, no value 0; in brackets, how many "
              "sentences. The regex for statutes also fires on any 'Act', 'Code' or 'section N' (no citation "
              "needed); eyecite's FullLawCitation needs a full citation (title, code, section)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
