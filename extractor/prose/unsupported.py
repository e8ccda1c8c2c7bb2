"""A case the selected backend or method does not implement, said as such.

A ``NotImplementedError`` (or a "does not support" message) on a path that only one value of a
flag selects is no bug the user must report: that value lacks the case, and the flag's other
values are the fix. The worker wrote the record before the run's reach was known, as an internal
invariant; once the reach names the selecting value, the cause, the first solution and the
``exampleFix`` say to pick another value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extractor.prose.commands import launcher_of_path
from extractor.prose.passed import INTERNAL_CAUSE
from extractor.reach.paths import Reach

__all__ = ["with_unsupported"]


def _switch(reach: Reach, choices: Mapping[str, Sequence[str]]) -> tuple[str, tuple[str, ...], str] | None:
    """(flag, the values that select the path, another value) when one flag value selects it."""
    if len(reach) != 1:
        return None
    for kind, name, values in sorted(reach[0]):
        if kind != "flag" or not values:
            continue
        others = [c for c in choices.get(name, ()) if c not in values]
        if others:
            return name, tuple(values), others[0]
    return None


def with_unsupported(
    partial: Mapping[str, Any], reach: Reach, choices: Mapping[str, Sequence[str]], workaround: str
) -> dict[str, Any]:
    """``partial`` with a not-implemented case stated as one of the selecting value; unchanged
    when the record is no such case or no single flag value selects its path."""
    out = dict(partial)
    if partial.get("errorType") != "not-implemented" or INTERNAL_CAUSE not in str(
        partial.get("documentation")
    ):
        return out
    if not partial.get("errorMessage"):
        # A bare ``raise NotImplementedError`` is a base class's stub: a subclass that lacks the
        # method is a bug, not a case the selected value chose to leave out.
        return out
    found = _switch(reach, choices)
    if found is None:
        return out
    flag, values, other = found
    what = flag.removeprefix("--").replace("-", " ")
    chosen = " / ".join(values)
    out["documentation"] = str(partial["documentation"]).replace(
        INTERNAL_CAUSE,
        f"Cause: the launch selected `{flag} {chosen}`, which does not implement this case; "
        f"another {what} avoids it.",
    )
    out["solutions"] = [workaround, *(s for s in partial["solutions"] if s != workaround)]
    base = launcher_of_path(str(partial.get("filePath", "")))
    out["exampleFix"] = f"# before\n{base} {flag} {values[0]}\n# after\n{base} {flag} {other}"
    return out
