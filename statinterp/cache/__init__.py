"""Everything on disk that can be rebuilt: atomic writes, array files, the caches."""
