"""Word vectors: training, loading and the directions of texts under them (embeddings), and the per-corpus provider."""
