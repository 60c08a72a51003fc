"""A court's authority (its level and system) and the filter of cases by court, jurisdiction and date.

:func:`court_authority` tells, for a court as a case stores it (its name, or a CourtListener /
courts-db court id, and the case's jurisdiction), the court's **level** (``supreme``: a court of
last resort; ``appellate``: an intermediate appellate court; ``trial``; ``""``: unknown), its
**system** (``federal`` or ``state``; ``""``: unknown) and, for a state court, its **state**.
In order, the first rule that knows:

1. CourtListener's own word: the courts file's ``jurisdiction`` column, which a CourtListener
   case stores as its jurisdiction (``F`` federal appellate, ``FD`` federal district, ``FB``
   bankruptcy, ``FBP`` bankruptcy appellate panel, ``FS`` federal special, ``S`` state supreme,
   ``SA`` state appellate, ``ST`` state trial, ``SS`` state special); ``F`` is the Supreme Court
   of the United States when courts-db says so (``scotus``), else a court of appeals.
2. courts-db's record of the court (found as :mod:`statinterp.corpus.pin_cites` finds it: by id,
   name, citation string or courts-db's name patterns): ``scotus`` is supreme; a district or
   bankruptcy court is a trial court whatever its ``type`` says; ``level`` ``colr`` (court of last
   resort) is supreme, ``iac`` appellate, ``gjc``/``ljc``/``trial`` trial; ``type`` ``trial`` is
   trial; an ``appellate`` court without a level is supreme when its name says "Supreme", else
   appellate. The system is courts-db's ``system``; the state its ``location``.
3. The court's name alone, for courts courts-db does not know: "Supreme Court" -> supreme,
   "Appeals"/"Appellate" -> appellate, "District Court"/"Superior Court"/"County Court"/"Trial"
   -> trial. The system: federal when the name or jurisdiction says "United States"; else,
   when the case's jurisdiction is a name (CAP's), a state of that name.

:class:`CaseFilter` is what ``--court``, ``--jurisdiction``, ``--level``, ``--since``,
``--until`` and ``--published-only`` select; the collection applies it in SQL before its
full-text lookup (:meth:`statinterp.collection.store.Collection.restrict`), and
:meth:`CaseFilter.accepts` applies it to a loaded case.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statinterp.errors import UsageError

if TYPE_CHECKING:
    from statinterp.corpus.dataset import Case

__all__ = ["LEVELS", "LEVEL_ORDER", "Authority", "CaseFilter", "court_authority", "parse_date_bound"]

#: Court levels, highest first.
LEVELS = ("supreme", "appellate", "trial")
#: A level's place in ``--order authority`` (unknown last).
LEVEL_ORDER = {"supreme": 0, "appellate": 1, "trial": 2, "": 3}
#: How a level is written for a reader.
LEVEL_NAMES = {"supreme": "supreme court", "appellate": "intermediate appellate court", "trial": "trial court",
               "": "court of unknown level"}

#: CourtListener's court jurisdictions (courts file, ``jurisdiction``): (level, system).
COURTLISTENER_JURISDICTIONS = {
    "F": ("appellate", "federal"), "FD": ("trial", "federal"), "FB": ("trial", "federal"),
    "FBP": ("appellate", "federal"), "FS": ("trial", "federal"), "S": ("supreme", "state"),
    "SA": ("appellate", "state"), "ST": ("trial", "state"), "SS": ("trial", "state"),
    "SAG": ("", "state"), "TRS": ("", "tribal"), "TRA": ("", "tribal"), "TRT": ("", "tribal"),
}
_FEDERAL_NAMES = ("united states", "u.s.", "us", "federal")


@dataclass(frozen=True)
class Authority:
    """A court's level (``supreme``, ``appellate``, ``trial`` or ``""``), system (``federal``,
    ``state``, other or ``""``), state (a state court's state, else ``""``) and courts-db id
    (``""``: courts-db does not know it)."""

    level: str = ""
    system: str = ""
    state: str = ""
    court_id: str = ""

    @property
    def jurisdiction(self) -> str:
        """``federal``, the state's name, or ``""`` (unknown)."""
        return "federal" if self.system == "federal" else self.state

    def describe(self) -> str:
        """``federal supreme court``, ``Pennsylvania intermediate appellate court``, ..."""
        where = "federal" if self.system == "federal" else (self.state or self.system)
        return " ".join(p for p in (where, LEVEL_NAMES[self.level]) if p)


def _by_name(name: str) -> str:
    low = name.lower()
    if "supreme court" in low or "court of last resort" in low:
        return "supreme"
    if "appeal" in low or "appellate" in low:
        return "appellate"
    if any(w in low for w in ("district court", "superior court", "county court", "trial", "bankruptcy",
                              "court of common pleas", "municipal court")):
        return "trial"
    return ""


@functools.lru_cache(maxsize=4096)
def court_authority(court: str, jurisdiction: str = "") -> Authority:
    """The :class:`Authority` of ``court`` (a name or a court id) in ``jurisdiction`` (the case's:
    CourtListener's code, CAP's jurisdiction name, or ``""``); see the module docstring."""
    from statinterp.corpus.pin_cites import courts_db_court

    found = courts_db_court(court) if court.strip() else None
    court_id = found["id"] if found else ""
    name = (found or {}).get("name") or court
    code = jurisdiction.strip().upper()
    low_name = name.lower()
    level = system = state = ""
    if code in COURTLISTENER_JURISDICTIONS:
        level, system = COURTLISTENER_JURISDICTIONS[code]
        if court_id == "scotus":
            level = "supreme"
    elif found is not None:
        level_db, kind = (found.get("level") or ""), (found.get("type") or "")
        if court_id == "scotus":
            level = "supreme"
        elif "district court" in low_name or "bankruptcy" in low_name or kind in ("trial", "bankruptcy"):
            level = "trial"
        elif level_db == "colr":
            level = "supreme"
        elif "iac" in level_db:
            level = "appellate"
        elif level_db in ("gjc", "ljc", "trial"):
            level = "trial"
        elif kind == "appellate":
            level = "supreme" if "supreme" in low_name else "appellate"
    else:
        level = _by_name(court)
    if found is not None and found.get("system"):
        system = system or found["system"]
        if found["system"] == "state":
            state = found.get("location") or ""
    if not system:
        low_j = jurisdiction.strip().lower()
        if low_j in _FEDERAL_NAMES or "united states" in court.lower():
            system = "federal"
        elif low_j and code not in COURTLISTENER_JURISDICTIONS:
            system, state = "state", jurisdiction.strip()
    if system == "state" and not state and jurisdiction.strip() and code not in COURTLISTENER_JURISDICTIONS:
        state = jurisdiction.strip()
    return Authority(level, system, state, court_id)


_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def parse_date_bound(value: str, option: str) -> str:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a decision date's prefix), checked."""
    value = value.strip()
    if not _DATE.match(value):
        raise UsageError(f"{option} {value!r}: give a date as YYYY, YYYY-MM or YYYY-MM-DD")
    return value


@dataclass(frozen=True)
class CaseFilter:
    """Which cases count: courts (names, CourtListener or courts-db ids; any of them), jurisdictions
    (``federal``, ``state`` or a state's name; any), levels (:data:`LEVELS`; any), decision dates from
    ``since`` to ``until`` (date prefixes, both inclusive: ``--until 2005`` keeps all of 2005), and
    with ``published_only`` only cases their source calls published (:meth:`published`).
    An empty filter keeps every case."""

    courts: tuple[str, ...] = ()
    jurisdictions: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    since: str = ""
    until: str = ""
    published_only: bool = False
    _court_ids: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for level in self.levels:
            if level not in LEVELS:
                raise UsageError(f"--level {level!r}: use one of {', '.join(LEVELS)}")
        if self.since:
            parse_date_bound(self.since, "--since")
        if self.until:
            parse_date_bound(self.until, "--until")
        if self.since and self.until and self.until < self.since[:len(self.until)]:
            raise UsageError(f"--since {self.since} is after --until {self.until}: no case can match")
        from statinterp.corpus.pin_cites import courts_db_court

        ids = []
        for court in self.courts:
            if not court.strip():
                raise UsageError("--court is empty; give a court's name, or its CourtListener or courts-db id")
            found = courts_db_court(court)
            ids.append(found["id"] if found else "")
        object.__setattr__(self, "_court_ids", tuple(ids))

    def __bool__(self) -> bool:
        return bool(self.courts or self.jurisdictions or self.levels or self.since or self.until
                    or self.published_only)

    def as_dict(self) -> dict[str, Any]:
        """The filter as recorded in reports and zips (only what is set)."""
        out: dict[str, Any] = {}
        for name in ("courts", "jurisdictions", "levels"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        for name in ("since", "until"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.published_only:
            out["published_only"] = True
        return out

    def describe(self) -> str:
        """One line for a reader: ``courts ca9; since 2000``."""
        parts = [f"{k.replace('_', ' ')} {', '.join(v) if isinstance(v, list) else v}"
                 for k, v in self.as_dict().items() if v is not True]
        if self.published_only:
            parts.append("published cases only")
        return "; ".join(parts) or "every case"

    # -- the parts -----------------------------------------------------------------------------
    def accepts_court(self, court: str, jurisdiction: str) -> bool:
        """Whether a court (as stored) in a jurisdiction passes ``courts``, ``jurisdictions`` and ``levels``."""
        authority = court_authority(court, jurisdiction)
        if self.courts:
            stored = court.strip().lower()
            if not any(stored == wanted.strip().lower() or (cid and cid == authority.court_id)
                       for wanted, cid in zip(self.courts, self._court_ids, strict=True)):
                return False
        if self.jurisdictions:
            mine = {authority.system.lower(), authority.state.lower(), jurisdiction.strip().lower()} - {""}
            if not any(j.strip().lower() in mine for j in self.jurisdictions):
                return False
        return not self.levels or authority.level in self.levels

    def accepts_date(self, date: str) -> bool:
        """Whether a decision date (``YYYY-MM-DD`` or a prefix) lies from ``since`` to ``until``."""
        date = date.strip()
        if self.since and date < self.since:
            return False
        return not (self.until and date[:len(self.until)] > self.until)

    @staticmethod
    def published(source: str, citations: list) -> bool:
        """Whether the source calls a case published: every CAP case (CAP holds the published
        reporters), and a case of another source that has a reporter citation (VOLUME REPORTER
        PAGE, :func:`~statinterp.corpus.pin_cites.parse_cite`) in a reporter other than the Federal
        Appendix (unpublished federal opinions)."""
        from statinterp.corpus.pin_cites import parse_cite

        if source.startswith("cap"):
            return True
        for cite in citations:
            text = cite[1] if isinstance(cite, list | tuple) and len(cite) > 1 else str(cite)
            parsed = parse_cite(text) if text.strip() else None  # VOLUME REPORTER PAGE (or a neutral cite)
            if parsed is not None and not re.search(r"App[’']x", parsed.reporter):
                return True
        return False

    def accepts(self, case: Case) -> bool:
        """Whether a loaded case passes the whole filter."""
        if not (self.accepts_court(case.court, case.jurisdiction) and self.accepts_date(case.date)):
            return False
        return not self.published_only or self.published(
            case.source, [("", c) for c in ((case.citation,) + tuple(case.alternate_citations)) if c])
