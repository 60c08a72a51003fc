"""A learned ranker trained across terms (issue 6): features, models, cross-validation, dedupe."""
