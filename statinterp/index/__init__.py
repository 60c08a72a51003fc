"""Per-term index (units by granularity, neighbours, queries) and background statistics."""

#: Neighbours kept on each side of a candidate for recursive context (the paper's n = 4). Here,
#: not in term_index, so that rankers can name it without importing the analysis (spaCy).
MAX_NEIGHBOURS = 4

#: The granularities of units, each with its background collection (see
#: :mod:`statinterp.index.term_index`). Here for the same reason: the store and the rankers name them.
LEVELS = ("sentence", "paragraph", "opinion", "case")
