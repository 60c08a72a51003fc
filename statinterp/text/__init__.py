"""Text analysis: spaCy pipeline, legal sentence segmentation, term matching, citations, token-id sequences."""

# The longest text statinterp takes: one home for the limit every layer applies. Here, not in
# analysis.py, so that the loaders and readers can name it without importing spaCy.
#
# The loaders (:mod:`statinterp.corpus.dataset`) and the bulk readers (:mod:`statinterp.sources`)
# refuse longer texts; the analysis pipeline (:mod:`statinterp.text.analysis`) and find's
# line-joining segmenter accept every text up to it (spaCy's ``max_length`` is raised to it).

#: Refuse texts longer than this many characters (the longest case text of the real data set has
#: about 0.7 million); the analyser accepts texts up to this length.
MAX_TEXT_CHARS = 10_000_000
