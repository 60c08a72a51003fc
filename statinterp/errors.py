"""Errors that the CLI reports as one clear line (exit status 2)."""

from __future__ import annotations


class StatinterpError(Exception):
    """Base class of every error statinterp reports to a user without a traceback."""

    exit_code = 2


class InputError(StatinterpError):
    """Bad input data: names the file, the record and the field that is wrong."""

    def __init__(self, file: object, problem: str, record: str | None = None, field: str | None = None):
        self.file = str(file)
        self.record = record
        self.field = field
        self.problem = problem
        where = [self.file]
        if record is not None:
            where.append(f"record {record!r}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(": ".join(where) + ": " + problem)


class UsageError(StatinterpError):
    """A bad option value or an impossible request (unknown method, missing term, ...)."""
