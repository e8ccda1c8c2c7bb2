"""Settings the message says go together or apart: "--a is incompatible with --b", "SGLANG_A
cannot be used with SGLANG_B", "--a requires --b", "--a can only be used with --b x".

A check on a combination often tests values derived from the settings (a mode the code computed,
a parameter a caller filled), so the constraint on the guard says little; the message names the
settings themselves, and what it says about them is the fix: drop one of two settings that
conflict, or add the one the first needs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from extractor.prose.flag_spelling import declared_flag
from extractor.prose.knowledge import FlagInfo

__all__ = ["Combination", "combination_of", "told_setting", "told_unset"]

_SETTING = r"(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*|SGLANG?_[A-Z0-9_]*[A-Z0-9])"
_CONFLICT_RES = (
    re.compile(
        _SETTING
        + r"[`'\"]?(?:\s+\S+)?\s+(?:is|are)\s+(?:not\s+compatible|incompatible)\s+with\s+[`'\"]?"
        + _SETTING
    ),
    re.compile(
        _SETTING
        + r"[`'\"]?(?:\s+\S+)?\s+(?:cannot|can ?not|can't|could not|should not|must not|may not)\s+be\s+"
        r"(?:used|enabled|set|combined|specified|given)(?:\s+together)?\s+(?:with|alongside)\s+[`'\"]?"
        + _SETTING
    ),
    re.compile(
        _SETTING + r"[`'\"]?(?:\s+\S+)?\s+(?:and|&)\s+[`'\"]?" + _SETTING + r"[`'\"]?(?:\s+\S+)?\s+"
        r"(?:are\s+mutually\s+exclusive|cannot\s+be\s+(?:used|enabled|set|combined|specified)\s+together|"
        r"are\s+incompatible|conflict)"
    ),
    re.compile(_SETTING + r"[`'\"]?(?:\s+\S+)?\s+conflicts?\s+with\s+[`'\"]?" + _SETTING),
    re.compile(
        r"(?i:cannot|can't|can ?not)\s+(?i:enable|use|set|specify)\s+both\s+[`'\"]?"
        + _SETTING
        + r"[`'\"]?\s+and\s+[`'\"]?"
        + _SETTING
    ),
)
_NEED_RES = (
    re.compile(
        _SETTING + r"[`'\"]?\s+(?:requires|needs|must\s+be\s+used\s+with|only\s+works\s+with|"
        r"can\s+only\s+be\s+used\s+with|is\s+only\s+supported\s+with|depends\s+on)\s+[`'\"]?"
        + _SETTING
        + r"(?:[`'\"]?[ =]+[`'\"]?([A-Za-z0-9_.]+))?"
    ),
)
# A flag the run's declarations do not describe (a script's own parser) reads as a switch by its name.
_SWITCH_RE = re.compile(r"--(?:enable|disable|use|no|skip|apply|allow|force)-")
# Words that follow a setting in a sentence without being its value ("--x requires --y to be set").
_NOT_VALUES = frozenset(
    [
        "to",
        "be",
        "is",
        "are",
        "and",
        "or",
        "with",
        "when",
        "for",
        "if",
        "set",
        "enabled",
        "disabled",
        "given",
        "specified",
        "on",
        "off",
        "the",
        "a",
        "an",
        "as",
        "in",
        "at",
        "by",
        "but",
        "not",
        "only",
        "also",
        "which",
        "that",
        "this",
        "it",
    ]
)


@dataclass(frozen=True)
class Combination:
    """Two settings the message ties together: ``conflict`` (drop either) or ``need`` (``first``
    needs ``second``, at ``value`` when the message gives one)."""

    kind: str
    first: str
    second: str
    value: str = ""

    def solutions(
        self, on: AbstractSet[str] = frozenset(), launched: AbstractSet[str] = frozenset()
    ) -> list[str]:
        """The fixes the message's words give. ``on``: variables on unless set to 0 (asked for,
        one is kept on, not set); ``launched``: variables the launch code may turn on itself
        (left unset, one may still be on, so it is set to 0)."""
        a, b = f"`{self.first}`", f"`{self.second}`"
        if self.kind == "conflict":
            return [
                f"{_upper_first(_drop(self.first, on | launched))}, or {_drop(self.second, on | launched)}: "
                f"the message says {a} and {b} cannot be combined"
            ]
        drop = f"Or {_drop(self.first, on | launched)}"
        if self.second in on and not self.value:
            return [
                f"Keep {b} on, its default: the message says {a} needs it; if your environment sets "
                f"`{self.second}=0`, remove that",
                drop,
            ]
        needed = f"`{self.second} {self.value}`" if self.value else b
        return [f"Also set {needed}: the message says {a} needs it", drop]

    def launches(self, flags: Mapping[str, FlagInfo]) -> tuple[list[str], list[str]]:
        """The settings of a launch that trips the check, and of one that does not."""
        first = _given(self.first, flags)
        if self.kind == "conflict":
            return [*first, *_given(self.second, flags)], first
        second = _given(self.second, flags, self.value)
        return first, [*first, *second]


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _drop(name: str, kept_on: AbstractSet[str] = frozenset()) -> str:
    if name.startswith("--"):
        return f"launch without `{name}`"
    # A variable on by default, or one the launch turns on itself, is off only when set to 0.
    return f"set `{name}=0`" if name in kept_on else f"unset `{name}`"


def _given(name: str, flags: Mapping[str, FlagInfo], value: str = "") -> list[str]:
    if not name.startswith("--"):
        return [f"{name}={value or 1}"]
    info = _declared(name, flags)
    switch = info.is_bool if info is not None else _SWITCH_RE.match(name) is not None
    if switch and not value:
        return [name]
    return [name, value or "<value>"]


def _declared(name: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    return declared_flag(name, flags)


# Words that follow a flag the message tells the user to pass without being its value ("use --x
# instead"); unlike after a needed setting, "enabled" or "disabled" there is the value.
_NOT_TOLD_VALUES = frozenset(
    {"to", "or", "and", "instead", "if", "when", "for", "on", "in", "the", "a", "an"}
    | {"explicitly", "manually", "directly", "again", "first", "too", "also", "here", "there"}
)
_TOLD_RE = re.compile(
    r"\b(?:pass|use|add|set|enable|specify|try|with)\s+[`'\"]?(--[a-z][a-z0-9-]*)(?:[ =][`'\"]?([A-Za-z0-9_.]+))?",
    re.I,
)


def told_setting(advice: Sequence[str], flags: Mapping[str, FlagInfo]) -> list[str]:
    """The flag (and value) the message's own advice tells the user to pass ("pass --disable-x",
    "use --y 8"), as command words; empty when it names none or gives a valued flag no value."""
    for sentence in advice:
        m = _TOLD_RE.search(sentence)
        if m is None:
            continue
        flag, value = m.group(1), (m.group(2) or "").rstrip(".")
        if value.lower() in _NOT_TOLD_VALUES:
            value = ""
        info = _declared(flag, flags)
        if info is not None and info.is_bool:
            return [flag]
        if value:
            return [flag, value]
    return []


# "disable SGLANG_X", "unset SGLANG_X", "set SGLANG_X off": the message asks for the variable gone.
_UNSET_RE = re.compile(
    r"\b(?:disable|unset|remove|turn\s+off|do\s+not\s+set|don't\s+set)\s+(?:the\s+)?(?:env(?:ironment)?\s+"
    r"(?:variable|var)\s+)?[`'\"]?(SGLANG?_[A-Z0-9_]*[A-Z0-9])\b"
    r"|\bset\s+[`'\"]?(SGLANG?_[A-Z0-9_]*[A-Z0-9])[`'\"]?\s+off\b",
    re.I,
)


def told_unset(advice: Sequence[str], name: str) -> bool:
    """Whether the message's own advice asks for the environment variable ``name`` to be
    disabled or unset: the fix then leaves it out of the environment instead of guessing a value
    (an unset variable falls back to the default the code was written for)."""
    for sentence in advice:
        for m in _UNSET_RE.finditer(sentence):
            if name in (m.group(1), m.group(2)):
                return True
    return False


def combination_of(message: str) -> Combination | None:
    """The first conflict or need between two settings the message states, if any."""
    text = " ".join(message.split())
    for rx in _CONFLICT_RES:
        m = rx.search(text)
        if m and m.group(1) != m.group(2):
            return Combination("conflict", m.group(1), m.group(2))
    for rx in _NEED_RES:
        m = rx.search(text)
        if m and m.group(1) != m.group(2):
            value = m.group(3) or ""
            if value.lower() in _NOT_VALUES or value.startswith("{") or not m.group(2).startswith("--"):
                value = ""
            return Combination("need", m.group(1), m.group(2), value)
    return None
