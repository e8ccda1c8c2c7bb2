"""Hardware and dependency causes in the user's terms: the other backends a device-specific
path can be swapped for (read from the flag's declared choices), and the packages a message
asks for (``"aiter is required when ..."``), deduplicated across spellings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractor.analysis.facts import Site
from extractor.prose.cause import Roles, message_flags, message_text
from extractor.prose.flag_spelling import find_flag
from extractor.prose.knowledge import Knowledge

__all__ = ["Alternative", "alternatives", "required_packages"]

_MAX_CHOICES = 8
# "<pkg> is required", "<pkg> is not installed": the package leads the sentence.
_REQUIRED_RE = re.compile(
    r"(?:^|[.:;]\s+)([A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9]) (?:is|are) (?:required|needed|not installed|not available)\b"
)
_NOT_PACKAGES = frozenset(
    {"it", "this", "that", "which", "model", "value", "input", "argument", "flag", "gpu"}
)


@dataclass(frozen=True)
class Alternative:
    """A backend flag the path is selected by, the values that select it, the other choices."""

    flag: str
    current: tuple[str, ...]
    others: tuple[str, ...]


def alternatives(site: Site, knowledge: Knowledge, roles: Roles) -> list[Alternative]:
    """Backend flags (``--x-backend``) that the gates test or the message names, with their
    declared choices other than the ones that select this path."""
    current: dict[str, list[str]] = {}
    for c in (c for v in roles.gates for c in v.constraints):
        if c.kind == "flag" and "backend" in c.name and c.op in ("eq", "in"):
            current.setdefault(c.name, []).extend(c.values)
    msg = message_text(site)
    for name in message_flags(site):
        if "backend" in name:
            named = re.findall(re.escape(name) + r"[= ]([A-Za-z0-9_.\-]+)", msg)
            current.setdefault(name, []).extend(named)
    if not current:
        return []
    flags = knowledge.flags_for(site.path)
    out = []
    for name, values in current.items():
        info = find_flag("itself-last", name, flags)
        if info is None or not info.choices:
            continue
        others = tuple(ch for ch in info.choices if ch not in values)[:_MAX_CHOICES]
        if others:
            out.append(Alternative(name, tuple(dict.fromkeys(values)), others))
    return out


def required_packages(site: Site, found: Sequence[str]) -> list[str]:
    """``found`` (what the cause rules read) plus the packages a message says are required,
    one spelling per package (``pyyaml`` and ``PyYAML`` are one)."""
    names = list(found)
    literal = " ".join(p for p in (site.message.parts if site.message else ()) if isinstance(p, str))
    for m in _REQUIRED_RE.finditer(literal or message_text(site)):
        word = m.group(1).rstrip(".")
        if (word.lower() not in _NOT_PACKAGES and not word[0].isupper()) or "-" in word or "_" in word:
            names.append(word)
    seen: set[str] = set()
    out = []
    for n in names:
        key = re.split(r"[<>=!~\[]", n, maxsplit=1)[0].lower().replace("_", "-")
        if key and key not in seen:
            seen.add(key)
            out.append(n)
    return out
