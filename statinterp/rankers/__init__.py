"""Rankers: base classes, lexical, embedding and novelty scorers, context, gates, the name grammar.

The composite rankers register themselves for the fluent methods of :mod:`statinterp.rankers.base`
(``in_context``, ``recursive``, ``expanded``, ``gated``) when their modules are imported: here.
"""

from statinterp.rankers import context, gates  # noqa: F401 - registers Interpolated, Recursive, Expanded, Gated
