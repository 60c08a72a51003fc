"""Rankers: base classes, lexical, embedding and novelty scorers, context, gates, the name grammar."""
