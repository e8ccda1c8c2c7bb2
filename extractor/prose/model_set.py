"""A flag that sglang sets itself for the models that reach a check: the user's value is no fix.

sglang declares some settings per architecture (:func:`extractor.reach.forced.set_by_function`):
``_deepseek_v4_overrides`` sets ``page_size`` to 256 (128 on NPU) whatever the launch gives. A
check of ``page_size`` in code that only DeepSeek-V4 checkpoints reach is then sglang's own value
disagreeing with sglang's own code: "Launch with `--page-size 256`" changes nothing, and the
record is an internal invariant. Where the model's override sets the flag only for some launches
(tests of other settings pick the write), the fix stands, and the record says where it does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from extractor.prose.passed import INTERNAL_CAUSE
from extractor.prose.tags import INTERNAL_TAG, retagged
from extractor.prose.wording import or_list
from extractor.reach.forced import ALWAYS
from extractor.reach.selectors import Selector, arch_names

__all__ = ["ModelSets", "Rewritten", "with_model_set", "with_rewritten"]

ModelSets = Mapping[str, Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]]]
"""flag -> ``(how, values, architectures)`` for each model override that writes it (``how`` is
:data:`extractor.reach.forced.ALWAYS` or ``SOME``; ``values`` the constants it writes, empty when
not known)."""

Rewritten = Mapping[str, Sequence[tuple[str, str]]]
"""flag -> ``(value, when)`` where the launch code replaces a value given for it (see
:attr:`extractor.prose.knowledge.Knowledge.rewritten`)."""

# "Cause: a launch flag (`--page-size`)." or "... (`--page-size`): the callers pass ..."
_FLAG_CAUSE_RE = re.compile(r"Cause: a launch flag \((`--[a-z0-9-]+`(?:, `--[a-z0-9-]+`)*)\)[^.]*\.")
_MAX_ARCHS = 3


def _reach_archs(
    reach: Sequence[frozenset[Selector]], forced: Mapping[str, Mapping[str, Sequence[str]]]
) -> set[str] | None:
    """The architectures every way in is for: an ``arch`` selector, or a flag value the code forces
    for some architectures (``--attention-backend dsv4``); None when some way is for any model."""
    out: set[str] = set()
    for conj in reach:
        archs = set().union(*(arch_names(s) for s in conj if s[0] == "arch"))
        if not archs:
            for kind, flag, values in conj:
                by_value = forced.get(flag, {})
                if kind == "flag" and values and all(v in by_value for v in values):
                    archs = set().union(*(by_value[v] for v in values))
                    break
        if not archs:
            return None
        out |= archs
    return out


def _archs_words(archs: Sequence[str]) -> str:
    said = [f"`{a}`" for a in archs[:_MAX_ARCHS]]
    more = len(archs) - len(said)
    return ", ".join(said) + f" and {more} more" if more else or_list(said)


def _values_words(values: Sequence[str]) -> str:
    return f" (to {or_list([f'`{v}`' for v in values])})" if values else ""


def _cause_flag(partial: Mapping[str, Any]) -> tuple[str, re.Match[str]] | None:
    """The one flag a record's cause sentence names, and that sentence; None for another cause."""
    found = _FLAG_CAUSE_RE.search(str(partial.get("documentation") or ""))
    if found is None:
        return None
    flags = re.findall(r"`(--[a-z0-9-]+)`", found.group(1))
    return (flags[0], found) if len(flags) == 1 else None


def with_model_set(
    partial: Mapping[str, Any],
    reach: Sequence[frozenset[Selector]],
    sets: ModelSets,
    forced: Mapping[str, Mapping[str, Sequence[str]]],
    drafts: AbstractSet[str] = frozenset(),
) -> dict[str, Any] | None:
    """``partial`` restated when its cause is one flag that the model overrides of every
    architecture reaching it write; None when that is not so. A draft architecture (``drafts``)
    runs under the target model's settings, and is left out."""
    doc = str(partial.get("documentation") or "")
    cause = _cause_flag(partial)
    if cause is None or cause[0] not in sets or not reach:
        return None
    flag, found = cause
    archs = (_reach_archs(reach, forced) or set()) - drafts
    if not archs:
        return None
    covering = [(how, values) for how, values, by in sets[flag] if archs <= set(by)]
    if not covering:
        return None
    named = _archs_words(sorted(archs))
    values = sorted({v for _, vs in covering for v in vs})
    said = _values_words(values)
    out = dict(partial)
    if all(how == ALWAYS for how, _ in covering):
        cond = str(partial.get("validationCode") or "").strip().rpartition("\n")[2]
        check = f"`{cond}`" if cond else "this check"
        where = str(partial.get("documentation", "")).partition("`")[2].partition("`")[0] or "the code"
        out["documentation"] = doc.replace(
            found.group(0),
            f"{INTERNAL_CAUSE} sglang sets `{flag}` itself for {named} checkpoints{said}, whatever the "
            "launch gives, so no value of yours decides it.",
        )
        out["triggerScenarios"] = (
            f"sglang's own `{flag}` for {named} checkpoints, for which {check} holds; it should not "
            "happen with any launch setting."
        )
        out["commonSituations"] = (
            f"`{where}` reached with {check}, though sglang sets `{flag}` itself for the checkpoints "
            "that reach it."
        )
        out["solutions"] = [
            f"sglang sets `{flag}` itself for {named} checkpoints{said}, replacing a value you give, "
            "so changing it does not avoid this check. Report it to sglang as a bug with the full "
            "message and traceback, the launch command, the model and the output of "
            "`python3 -m sglang.check_env`"
        ]
        out["exampleFix"] = (
            f"# before: sglang's own {flag} for this model fails the check\n"
            "# after: collect what a bug report needs\npython3 -m sglang.check_env"
        )
        out["errorType"], out["backgroundTag"], out["handlingStrategy"] = (
            INTERNAL_TAG,
            INTERNAL_TAG,
            "fail-fast",
        )
        tags = retagged(partial.get("tags"), partial.get("backgroundTag"), INTERNAL_TAG)
        if tags is not None:
            out["tags"] = tags
        return out
    out["solutions"] = [
        f"For {named} checkpoints sglang sets `{flag}` itself for some launches{said}, replacing a "
        "value you give (its log says so when it does): there, changing it does not avoid this "
        "check, and it is a bug to report",
        *(str(s) for s in partial.get("solutions") or ()),
    ]
    return out


def with_rewritten(partial: Mapping[str, Any], rewritten: Rewritten) -> dict[str, Any] | None:
    """``partial`` with a word first on where the launch code replaces the value its one cause
    flag is given (``speculative_num_draft_tokens = speculative_num_steps + 1`` when
    ``speculative_eagle_topk == 1``); None when it names no such flag."""
    cause = _cause_flag(partial)
    if cause is None or not rewritten.get(cause[0]):
        return None
    flag = cause[0]
    value, when = rewritten[flag][0]
    out = dict(partial)
    out["solutions"] = [
        f"sglang sets `{flag}` itself to `{value}` when `{when}`, replacing a value you give: "
        "with such a launch the value this check reads is that one, not yours",
        *(str(s) for s in partial.get("solutions") or ()),
    ]
    return out
