"""What a match is: the evidence behind one record's score, its parts, and the ranked results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extractor.datasets.match.classes import last_name
from extractor.datasets.match.query import QueryException
from extractor.records.model import ErrorRecord

W_MESSAGE, W_CLASS, W_FRAME = 0.55, 0.15, 0.30


@dataclass(frozen=True)
class Match:
    """One ranked record and why it ranked there."""

    score: float
    record: ErrorRecord
    why: tuple[str, ...]
    explain: tuple[str, ...] = ()
    """Each part of the score (for ``--explain``)."""
    via: ErrorRecord | None = None
    """The older dataset's record the input matched, when ``record`` is its current pairing."""


@dataclass(frozen=True)
class MatchGroup:
    """The ranked sites of one distinct error of the input."""

    label: str
    """The error as the input shows it (``Class: first line of its message``); "" when unknown."""
    matches: list[Match]


def distinct_groups(groups: dict[int, MatchGroup]) -> list[MatchGroup]:
    """The groups in input order, each distinct error once (by its text or its best site)."""
    out: list[MatchGroup] = []
    seen: set[str] = set()
    for group in groups.values():
        keys = {"label:" + group.label} if group.label else set()
        if group.matches:
            keys.add("site:" + group.matches[0].record.id)
        if keys & seen:
            continue
        seen |= keys
        out.append(group)
    if len(out) > 1:
        # A line that names nothing (no site fits it) is noise next to errors that do.
        out = [grp for grp in out if grp.matches] or out[:1]
    return out


def why(q: QueryException, e: Evidence) -> tuple[str, ...]:
    why = tuple(x for x in (e.message_why, e.frame_why) if x)
    if q.cls and e.cls > 0:
        why += (f"class {last_name(q.cls)} {'matches' if e.cls == 1 else 'is related'}",)
    return why


def explain(q: QueryException, e: Evidence) -> tuple[str, ...]:
    """Each part of the score: its level, its points, and what earned it."""
    out = [
        f"message {e.message:.2f} x {100 * W_MESSAGE:.0f} = {100 * W_MESSAGE * e.message:.1f}"
        + (f" ({e.message_why})" if e.message_why else " (no message evidence)"),
        f"class {e.cls:+.2f} x {100 * W_CLASS:.0f} = {100 * W_CLASS * e.cls:+.1f}"
        + (f" (input says {q.cls})" if q.cls else " (input names no class)"),
        f"frame {e.frame:.2f} x {100 * W_FRAME:.0f} = {100 * W_FRAME * e.frame:.1f}"
        + (f" ({e.frame_why})" if e.frame_why else " (no traceback frame at this site)"),
    ]
    if q.weight != 1.0:
        out.append(f"all x {q.weight:.2f} (an earlier exception of a chain, or one quoted in another)")
    return tuple(out)


def reach_why(choices: Sequence[str]) -> str:
    return "reached with " + ", ".join(f"`{c}`" for c in choices) + ", which the input names"


def reach_explain(choices: Sequence[str], points: float) -> str:
    return (
        f"reach +{100 * points:.1f} (the input names {', '.join(choices)}, a choice this site runs under; "
        "a tiebreak, never more than a point)"
    )


def label(items: Sequence[tuple[QueryException, object]]) -> str:
    """The error a group stands for: its heaviest exception, as ``Class: first message line``."""
    q = max((q for q, _ in items), key=lambda q: q.weight)
    message = q.variants[0][0].strip().split("\n")[0] if q.variants else ""
    if len(message) > 160:
        message = message[:157] + "..."
    if q.cls:
        return f"{q.cls}: {message}" if message else q.cls
    return message


@dataclass
class Evidence:
    message: float = 0.0
    message_why: str = ""
    message_kind: str = ""  # "full", "contain" or "fuzzy"
    cls: float = 0.0
    frame: float = 0.0
    frame_why: str = ""
    frame_close: bool = False  # a frame within a few lines of the site

    def total(self, weight: float) -> float:
        return weight * max(0.0, W_MESSAGE * self.message + W_CLASS * self.cls + W_FRAME * self.frame)


WHY = {
    "full": "pattern fully matches",
    "weak": "pattern fully matches (mostly placeholders)",
    "contain": "its literal text occurs in the message",
    "fuzzy": "most of its words occur in the message",
    "prefix": "the message is its text cut short",
}


def qualifies(e: Evidence, custom_class: bool) -> bool:
    """Whether the evidence names this site at all (the score then says how well)."""
    if e.frame_close and (e.cls >= 0 or e.message > 0):
        # Near the frame's line, unless its class contradicts the input's and its text does too
        # (a bare AssertionError from an assert that has no record is not the raise next to it).
        return True
    if custom_class and e.cls == 1.0:
        return True  # an sglang-specific class is evidence on its own; ValueError is not
    if e.message_kind in ("full", "contain", "prefix"):
        return True
    # Word overlap is loose: not against a conflicting class. A pattern that is mostly
    # placeholders matches almost any text: only a frame or an sglang class backs it up.
    return e.message_kind == "fuzzy" and e.cls >= 0
