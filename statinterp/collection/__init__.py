"""The collection: ingested case law in SQLite (FTS5, citations, background statistics), the
engines that build it (in-process, Dask), and finding a term's sentences in it."""
