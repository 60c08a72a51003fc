"""Which pairs the pair index should hold: all adjacent token pairs, or only those with a stop word.

    python -m benchmarks.find_pairs COLLECTION SCRATCH.sqlite {all,stop}

Reads the paragraphs of an existing collection (read-only) and indexes their pairs, as
``paragraph_pairs`` does (:data:`~statinterp.text.term_match.PAIR_INDEX_OPTIONS`, a contentless
table), into the scratch database: ``all`` adjacent pairs, or ``stop``, only the pairs with one
of :data:`STOP_WORDS`. Prints the pairs indexed (with repeats within a paragraph), the CPU
seconds of tokenizing and indexing, and the scratch file's size (docs/collection.md, "The pair
index", has the figures of the realistic 10 k collection).
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import sys
import time

from statinterp.text.term_match import PAIR_INDEX_OPTIONS, _fts_tokens, fts_pairs

#: Function words (77): the commonest tokens of English case law, whose phrase lookups grow with the collection.
STOP_WORDS = frozenset("""a an the of to in on at by for from with as or and but not no nor is be are was were been
being it its this that these those which who whom whose such any all each other than then there their his her
he she they them we our you your i my me shall may must will would should could can under upon into
if so do does did has have had""".split())


def main(argv: list[str]) -> int:
    source, out, mode = argv
    db = sqlite3.connect(f"file:{source}/collection.sqlite?mode=ro", uri=True)
    if os.path.exists(out):
        os.remove(out)
    scratch = sqlite3.connect(out, isolation_level=None)
    scratch.execute("PRAGMA journal_mode = WAL")
    scratch.execute(f"CREATE VIRTUAL TABLE p USING fts5(pairs, content='', {PAIR_INDEX_OPTIONS})")
    start = time.process_time()
    paragraphs = pairs = 0
    scratch.execute("BEGIN")
    for pid, text in db.execute("SELECT id, text FROM paragraphs"):
        tokens = _fts_tokens(text)
        kept = [pair for pair, (a, b) in zip(fts_pairs(tokens), itertools.pairwise(tokens), strict=True)
                if mode == "all" or a in STOP_WORDS or b in STOP_WORDS]
        pairs += len(kept)
        scratch.execute("INSERT INTO p (rowid, pairs) VALUES (?, ?)", (pid, " ".join(kept)))
        paragraphs += 1
        if paragraphs % 20000 == 0:
            scratch.execute("COMMIT")
            scratch.execute("BEGIN")
    scratch.execute("COMMIT")
    cpu = time.process_time() - start
    scratch.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"{mode}: {paragraphs} paragraphs, {pairs} pairs, {cpu:.1f} s CPU, {os.path.getsize(out) / 1e6:.1f} MB "
          f"(the collection: {os.path.getsize(f'{source}/collection.sqlite') / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
