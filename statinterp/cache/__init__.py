"""Everything on disk that can be rebuilt: atomic writes, safe reads, array files and the caches.

The cache modules keep the files (where they are, checksums, atomic writes, size limits, what
happens to a damaged entry); the domain modules keep the computing and say what an entry means.
Nothing here imports a domain module (``tests/package/test_import_graph.py``).

``store`` is the one cache: one layout, one key scheme, one damaged-entry rule, one eviction
rule, ``info`` and ``clear``, the cache folder and the code fingerprint of keys. ``namespaces``
holds its thin classes saying what an entry holds (token arrays per text, prepared corpora,
unit directions, a slow lookup's answers, trained word vectors and dense embeddings).
Beneath: ``files`` (atomic writes, regular-file reads with a size cap, checksummed array files).
"""
