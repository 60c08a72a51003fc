"""Per-term index (units by granularity, neighbours, queries) and background statistics."""
