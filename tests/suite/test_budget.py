"""The fast loop's budget report (tests/support/budget.py, issue 37)."""

from tests.support.budget import over_budget


def test_only_tests_over_the_budget_are_named_slowest_first():
    spent = {"a": (0.5, 9.0), "b": (4.0, 4.5), "c": (12.0, 30.0), "d": (3.0, 3.0)}
    assert over_budget(spent, 3.0) == [("c", 12.0, 30.0), ("b", 4.0, 4.5)]


def test_nothing_is_named_when_every_test_is_within_the_budget():
    assert over_budget({"a": (0.1, 0.1)}, 3.0) == []
