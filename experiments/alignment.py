"""How well do our sentence segments line up with the labelled candidate sentences?

For every labelled sentence of every term, its character span in its opinion text is
located (sentence offset inside its paragraph + paragraph offset inside the opinion,
with ``str.find``).  The opinion text is segmented with the plain spaCy pipeline
(``build_pipeline(legal_rules=False)``, "before") and with the legal rules ("after").
A candidate is

* ``aligned`` when exactly one segment overlaps it and that segment's span equals the
  candidate's span (both trimmed of surrounding whitespace);
* ``split`` when it overlaps several segments (a boundary falls inside it);
* ``merged`` when it lies inside one larger segment.

Also measured: tokens per second of ``nlp.pipe`` over the full case texts, for both
pipelines.  Writes a Markdown report (default ``experiment-results/segmentation.md``;
the committed ``reports/segmentation.md`` with ``--out reports/ --force``).

Run from the project root::

    python -m experiments.alignment --data ../shared/data/statutory_interpretation
"""

from __future__ import annotations

import argparse
import bisect
import glob
import json
import os
import re
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field

from experiments.common import DEFAULT_DATA, add_output_options, output_path, shown_data
from statinterp.text.analysis import segmenter_code_digest
from statinterp.text.segmentation import SEGMENTER_VERSION, build_pipeline, sentence_spans


def unique_records(paths: list[str], kind: str):
    """The ``kind`` records (``case`` or ``opinion``) of the terms' files, each id once, in order."""
    seen = set()
    for path in paths:
        _, t = load_term(path)
        for rid, record in t[kind].items():
            if rid not in seen:
                seen.add(rid)
                yield record


def load_term(path: str) -> tuple[str, dict[str, dict]]:
    term = os.path.basename(path)[: -len(".zip")]
    with zipfile.ZipFile(path) as zf:
        tables = {}
        for name in zf.namelist():
            kind = name.rsplit("-", 1)[-1][: -len(".json")]
            tables[kind] = json.loads(zf.read(name))
    return term, tables


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@dataclass
class TermResult:
    term: str
    n: int = 0
    not_found: int = 0
    ambiguous: int = 0  # paragraph or sentence text occurs more than once (first occurrence used)
    crosses_newline: int = 0
    before: Counter = field(default_factory=Counter)
    after: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)


def classify(span: tuple[int, int], segments: list[tuple[int, int]], seg_starts: list[int]) -> str:
    cs, ce = span
    # segments overlapping [cs, ce): sorted, non-overlapping
    k = bisect.bisect_right(seg_starts, cs) - 1
    k = max(k, 0)
    overlapping = []
    while k < len(segments) and segments[k][0] < ce:
        s, e = segments[k]
        if e > cs:
            overlapping.append((s, e))
        k += 1
    if len(overlapping) > 1:
        return "split"
    if len(overlapping) == 1:
        return "aligned" if overlapping[0] == (cs, ce) else "merged"
    return "merged"  # cannot happen for non-empty candidates; counted conservatively


def measure_alignment(paths: list[str], nlp_before, nlp_after, keep_examples: int = 0) -> list[TermResult]:
    results = []
    for path in paths:
        term, t = load_term(path)
        res = TermResult(term)
        located: dict[str, list[tuple[int, int]]] = {}
        for sid, sent in t["sentence"].items():
            res.n += 1
            opinion = t["opinion"][sent["opinion_id"]]["text"]
            paragraph = t["paragraph"][sent["paragraph_id"]]["text"]
            p_off = opinion.find(paragraph)
            s_off = paragraph.find(sent["text"])
            if p_off < 0 or s_off < 0:
                res.not_found += 1
                continue
            if opinion.count(paragraph) > 1 or paragraph.count(sent["text"]) > 1:
                res.ambiguous += 1
            start = p_off + s_off
            span = _trim(opinion, start, start + len(sent["text"]))
            if "\n" in opinion[span[0] : span[1]]:
                res.crosses_newline += 1
            located.setdefault(sent["opinion_id"], []).append((sid, span))
        ids = sorted(located)
        texts = [t["opinion"][oid]["text"] for oid in ids]
        for label, nlp, counter in (("before", nlp_before, res.before), ("after", nlp_after, res.after)):
            for oid, text, doc in zip(ids, texts, nlp.pipe(texts, batch_size=16), strict=False):
                segs = sentence_spans(doc)
                starts = [s for s, _ in segs]
                for _sid, span in located[oid]:
                    outcome = classify(span, segs, starts)
                    counter[outcome] += 1
                    if keep_examples and label == "after" and outcome != "aligned":
                        res.examples.setdefault(outcome, []).append((text, span, segs, starts))
        results.append(res)
    return results


def measure_speed(paths: list[str], max_cases: int | None, repeats: int) -> dict[str, dict]:
    texts = [case["text"] for case in unique_records(paths, "case")]
    texts.sort(key=len)  # stable, reproducible order; spreads nothing across runs
    if max_cases is not None:
        texts = texts[:max_cases]
    out = {}
    pipelines = {"plain sentencizer (legal_rules=False)": False, "legal rules (legal_rules=True)": True}
    nlps = {name: build_pipeline(legal_rules=flag) for name, flag in pipelines.items()}
    for nlp in nlps.values():  # warm up caches (lexemes, lookup tables, token classes)
        for _ in nlp.pipe(texts[:20]):
            pass
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(repeats):
        for name, nlp in nlps.items():  # interleaved so drifts in machine load hit both
            tokens = 0
            c0, w0 = time.process_time(), time.perf_counter()
            for doc in nlp.pipe(texts, batch_size=64):
                tokens += len(doc)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            if name not in best or cpu < best[name][0]:
                best[name] = (cpu, wall, tokens)
    for name, (cpu, wall, tokens) in best.items():
        out[name] = {
            "texts": len(texts), "chars": sum(map(len, texts)), "tokens": tokens,
            "cpu_seconds": cpu, "wall_seconds": wall,
            "tok_per_cpu_s": tokens / cpu, "tok_per_wall_s": tokens / wall,
        }
    # The segmentation component alone (sentencizer vs legal_sentence_boundaries) on the
    # same texts, tokenized beforehand by each pipeline's own tokenizer: every 10th case.
    sample = texts[::10]
    for name, nlp in nlps.items():
        component_name = nlp.pipe_names[-1]
        component = nlp.get_pipe(component_name)
        docs = [nlp.make_doc(text) for text in sample]
        tokens = sum(map(len, docs))
        cpu_best = None
        for _ in range(max(repeats, 3)):
            c0 = time.process_time()
            for doc in docs:
                component(doc)
            cpu = time.process_time() - c0
            cpu_best = cpu if cpu_best is None else min(cpu_best, cpu)
        out[name]["component"] = {"name": component_name, "texts": len(sample), "tokens": tokens,
                                  "cpu_seconds": cpu_best, "tok_per_cpu_s": tokens / cpu_best}
        del docs
    return out


def data_notes(paths: list[str]) -> dict[str, int]:
    """Line-level facts about the opinion texts (each opinion once)."""
    star_line = re.compile(r"\[?\*+\d+(?:-\*?\d+)?\]?")
    notes = Counter()
    for opinion in unique_records(paths, "opinion"):
        notes["opinions"] += 1
        for line in opinion["text"].split("\n"):
            line = line.strip()
            notes["lines"] += 1
            if star_line.fullmatch(line):
                notes["star_page_lines"] += 1
            elif line.isdigit():
                notes["number_lines"] += 1
    return dict(notes)


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:.1f}%" if n else "n/a"


def render(results: list[TermResult], speed: dict | None, command: str, speed_load: str = "n/a",
           notes: dict | None = None) -> str:
    from statinterp.provenance import provenance_lines, run_provenance

    provenance = run_provenance(command)
    lines = []
    lines.append("# Sentence segmentation: alignment with the labelled sentences")
    lines.append("")
    lines.append("Produced by:")
    lines.append("")
    lines.append("```")
    lines.append(command)
    lines.append("```")
    lines.append("")
    lines.append(f"- Date: {provenance['date']}; segmenter `{SEGMENTER_VERSION}` (code digest "
                 f"`{segmenter_code_digest()}`, part of the analysis cache key); {os.cpu_count()} CPUs visible; "
                 "single process.")
    lines.extend(provenance_lines(provenance))
    lines.append("")
    lines.append(
        "*Before* = `build_pipeline(legal_rules=False)` (spaCy `blank('en')` + lookup lemmatizer + "
        "`sentencizer`); *after* = `build_pipeline(legal_rules=True)`. Each labelled sentence is located "
        "in its opinion text (paragraph offset in the opinion + sentence offset in the paragraph, "
        "`str.find`), the opinion is segmented, and the candidate counts as *aligned* when exactly one "
        "segment covers it with the same whitespace-trimmed span, *split* when it spans several "
        "segments, *merged* when it is part of one larger segment."
    )
    lines.append("")
    lines.append(
        "| term | candidates | not found | aligned before | aligned after | split before | split after "
        "| merged before | merged after | contain a newline |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = TermResult("**all terms**")
    for r in results + [tot]:
        if r is tot:
            for x in results:
                tot.n += x.n
                tot.not_found += x.not_found
                tot.ambiguous += x.ambiguous
                tot.crosses_newline += x.crosses_newline
                tot.before.update(x.before)
                tot.after.update(x.after)
        m = r.n - r.not_found
        b, a = r.before, r.after
        lines.append(
            f"| {r.term} | {r.n} | {r.not_found} | {b['aligned']} ({_pct(b['aligned'], m)}) "
            f"| {a['aligned']} ({_pct(a['aligned'], m)}) | {b['split']} | {a['split']} "
            f"| {b['merged']} | {a['merged']} | {r.crosses_newline} |"
        )
    m = tot.n - tot.not_found
    nl_free = m - tot.crosses_newline
    lines.append("")
    lines.append(
        f"Overall: {tot.before['aligned']}/{m} aligned before ({_pct(tot.before['aligned'], m)}), "
        f"{tot.after['aligned']}/{m} after ({_pct(tot.after['aligned'], m)}). "
        f"Candidates spanning several segments: {tot.before['split']} before, {tot.after['split']} after."
    )
    lines.append("")
    lines.append(
        f"{tot.crosses_newline} labelled sentences contain a line break (mostly statute text quoted as "
        "a list, \"(A) ...;\\n(B) ...\", and sentences interrupted by a footnote-number line such as "
        "\"...on board,\\n10\\nthe failure...\"). The legal rules end a sentence at every newline, so "
        "these can never align after; among the "
        f"{nl_free} newline-free candidates the after rate is "
        f"{_pct(tot.after['aligned'] - 0, nl_free)} (every aligned candidate is newline-free)."
    )
    lines.append("")
    lines.append(
        f"Sentences not found: {tot.not_found}; sentences whose paragraph or own text occurs more than once "
        f"(first occurrence used): {tot.ambiguous}."
    )
    lines.append("")
    if notes:
        lines.append(
            f"Opinion texts: {notes.get('opinions', 0)} opinions, {notes.get('lines', 0):,} lines; lines that are "
            f"only a star-page marker (\"*457\", \"[*12]\"): {notes.get('star_page_lines', 0)}; lines that are only a "
            f"number (footnote marks, kept as their own line): {notes.get('number_lines', 0):,}."
        )
        lines.append("")
    if speed:
        lines.append("## Throughput")
        lines.append("")
        lines.append(
            "`nlp.pipe(texts, batch_size=64)` over the case texts (each case once), one process, after a "
            "warm-up; the two pipelines are run interleaved and the repeat with the least CPU time is kept. "
            "Tokens per CPU-second (`time.process_time`) is the figure to compare: wall-clock time depends "
            f"on what else the machine runs (load average {speed_load}). Token counts differ slightly "
            "because the special cases keep abbreviations whole."
        )
        lines.append("")
        lines.append("| pipeline | texts | tokens | CPU s | tokens / CPU s | wall s | tokens / wall s |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for name, s in speed.items():
            lines.append(
                f"| {name} | {s['texts']} | {s['tokens']:,} | {s['cpu_seconds']:.1f} | {s['tok_per_cpu_s']:,.0f} "
                f"| {s['wall_seconds']:.1f} | {s['tok_per_wall_s']:,.0f} |"
            )
        lines.append("")
        lines.append(
            "The segmentation component alone, on every 10th case pre-tokenized by its own pipeline's "
            "tokenizer (least CPU time of the repeats):"
        )
        lines.append("")
        lines.append("| component | texts | tokens | CPU s | tokens / CPU s |")
        lines.append("|---|---:|---:|---:|---:|")
        for s in speed.values():
            c = s.get("component")
            if c:
                lines.append(f"| `{c['name']}` | {c['texts']} | {c['tokens']:,} | {c['cpu_seconds']:.2f} "
                             f"| {c['tok_per_cpu_s']:,.0f} |")
        vals = list(speed.values())
        if len(vals) == 2:
            base, legal = vals
            lines.append("")
            lines.append(
                f"Legal rules: {100.0 * (base['tok_per_cpu_s'] / legal['tok_per_cpu_s'] - 1):+.1f}% CPU time per "
                f"token relative to the plain pipeline "
                f"({100.0 * (base['tok_per_wall_s'] / legal['tok_per_wall_s'] - 1):+.1f}% wall-clock)."
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder with the TERM.zip files")
    add_output_options(ap, "segmentation", "--report")  # --report: its earlier name; '-' for stdout only
    ap.add_argument("--no-speed", action="store_true", help="skip the tokens/second measurement")
    ap.add_argument("--speed-cases", type=int, default=None, help="time only the N shortest cases")
    ap.add_argument("--repeats", type=int, default=2, help="timing repeats (best is kept)")
    ap.add_argument("--show", type=int, default=0, help="print N misaligned examples per outcome")
    args = ap.parse_args(argv)
    out = None if args.out == "-" else output_path(args, "segmentation")

    paths = sorted(glob.glob(os.path.join(args.data, "*.zip")))
    if not paths:
        print(f"no TERM.zip files under {args.data!r}: nothing to measure", file=sys.stderr)
        return 1
    command = "python -m experiments.alignment " + " ".join(
        shown_data(a) if a == args.data else a if a.startswith("-") else repr(a) if " " in a else a
        for a in (argv if argv is not None else sys.argv[1:])
    )
    nlp_before = build_pipeline(legal_rules=False)
    nlp_after = build_pipeline(legal_rules=True)
    results = measure_alignment(paths, nlp_before, nlp_after, keep_examples=args.show)
    if args.show:
        for r in results:
            for outcome, exs in r.examples.items():
                for text, (cs, ce), segs, starts in exs[: args.show]:
                    k = max(bisect.bisect_right(starts, cs) - 1, 0)
                    parts = []
                    while k < len(segs) and segs[k][0] < ce:
                        parts.append(text[segs[k][0] : segs[k][1]])
                        k += 1
                    print(f"--- {r.term} {outcome}\nLABEL: {text[cs:ce]!r}")
                    for p in parts:
                        print(f"  SEG: {p!r}")
    speed = None if args.no_speed else measure_speed(paths, args.speed_cases, args.repeats)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    report = render(results, speed, command,
                    speed_load=f"{load} over 1/5/15 min at the end of the run, {os.cpu_count()} CPUs",
                    notes=data_notes(paths))
    print(report)
    if out is not None:
        from statinterp.cache import files as atomic

        atomic.write_text(out, report + "\n", force=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
