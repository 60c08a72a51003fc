"""Everything on disk that can be rebuilt: atomic writes, safe reads, array files and the caches.

The cache modules keep the files (where they are, checksums, atomic writes, size limits, what
happens to a damaged entry); the domain modules keep the computing and say what an entry means.
Nothing here imports a domain module (``tests/package/test_import_graph.py``).

``store`` is the one cache: one layout, one key scheme, one damaged-entry rule, one eviction
rule, ``info`` and ``clear``. ``analysis`` (token arrays per text), ``prepared`` (prepared
corpora), ``vectors`` (trained word vectors, dense embeddings), ``directions`` (unit directions)
and ``answers`` (a slow lookup's answers kept between processes) are its namespaces, each a thin
class saying what an entry holds. Beneath: ``atomic`` (temp file + rename), ``files`` (regular
files only, size-capped reads), ``arrayfile`` (checksummed manifest + raw arrays),
``fingerprint`` (source-code fingerprint for cache keys), ``location`` (the cache folder).
"""
