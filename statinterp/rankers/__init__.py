"""Rankers: base classes, lexical, embedding and novelty scorers, context, gates, the name grammar.

Every part registers itself in :mod:`statinterp.rankers.registry` where it is defined; the
registry imports the built-in parts' modules the first time it is read.
"""
