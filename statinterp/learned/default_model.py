"""The learned model shipped with statinterp: what ``statinterp rank`` (and ``review``) use when
neither a method nor a model is chosen.

``data/models/default.statinterp-model`` (installed as ``statinterp.data``): the ``ensemble``
learner trained on the 14 terms of the annotated data set with the feature families that need
no word vectors. How it was made and how it scores: ``data/models/README.md``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from statinterp.learned.model import LearnedRanker, load_model

__all__ = ["default_model_path", "default_ranker"]


def default_model_path() -> Path:
    """Where the shipped default model is installed."""
    return Path(str(resources.files("statinterp.data").joinpath("models", "default.statinterp-model")))


def default_ranker() -> LearnedRanker:
    """The shipped default model, loaded (its name: ``learned:default``)."""
    return load_model(default_model_path())
