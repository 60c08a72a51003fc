"""Word vectors: training, loading, and the per-corpus provider."""
