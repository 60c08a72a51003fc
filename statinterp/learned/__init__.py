"""Learned rankers: features, models, cross-validation across terms (issue 6), feedback within a
term, continuous review and its simulated reviewer."""
