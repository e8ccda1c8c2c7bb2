"""A case the selected backend or method does not implement, said as such.

A ``NotImplementedError`` (or a "does not support" message) on a path that only one value of a
flag selects is no bug the user must report: that value lacks the case, and the flag's other
values are the fix. The worker wrote the record before the run's reach was known, as an internal
invariant; once the reach names the selecting value, the cause, the first solution and the
``exampleFix`` say to pick another value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from extractor.prose.advice import INTERNAL_CHECK
from extractor.prose.commands import launcher_of_path
from extractor.prose.passed import internal_sentence

__all__ = ["with_unsupported"]


def with_unsupported(
    partial: Mapping[str, Any],
    flag: str,
    values: tuple[str, ...],
    other: str,
    workaround: str,
    agreed: bool = False,
) -> dict[str, Any]:
    """``partial`` with a not-implemented case stated as one of ``flag``'s ``values`` (which select
    its path; ``other`` is another choice of the flag); unchanged when the record is no such case.

    ``agreed``: the checkpoint decides the flag's value (:mod:`extractor.reach.agreement`), so the
    way out is a checkpoint made with another value, not another value on the command line."""
    out = dict(partial)
    said = internal_sentence(partial.get("documentation"))
    if partial.get("errorType") != "not-implemented" or said is None:
        return out
    if not partial.get("errorMessage"):
        # A bare ``raise NotImplementedError`` is a base class's stub: a subclass that lacks the
        # method is a bug, not a case the selected value chose to leave out.
        return out
    what = flag.removeprefix("--").replace("-", " ")
    chosen = " / ".join(values)
    base = launcher_of_path(str(partial.get("filePath", "")))
    if agreed:
        cause = (
            f"Cause: the {what} `{chosen}` (the checkpoint's own, or asked for at launch) does not "
            f"implement this case; a checkpoint made with another {what} avoids it."
        )
        fix = (
            f"# before: a checkpoint whose {what} is {values[0]}\n{base}\n"
            f"# after: a checkpoint made with another {what}\n{base.replace('<model>', '<other-checkpoint>')}"
        )
    else:
        cause = (
            f"Cause: the launch selected `{flag} {chosen}`, which does not implement this case; "
            f"another {what} avoids it."
        )
        fix = f"# before\n{base} {flag} {values[0]}\n# after\n{base} {flag} {other}"
    out["documentation"] = str(partial["documentation"]).replace(said, cause)
    # The bug report the internal wording asked for is now a feature request, and comes last.
    with_what = f"the {what} `{chosen}`" if agreed else f"`{flag} {chosen}`"
    ask = (
        f"If you need this case with {with_what}, ask sglang to support it: open an issue with "
        "the full message, the launch command and the model"
    )
    kept = [s for s in partial["solutions"] if s != workaround and not s.startswith(INTERNAL_CHECK)]
    out["solutions"] = [workaround, *kept, ask]
    out["exampleFix"] = fix
    return out
