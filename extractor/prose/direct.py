"""An internal check that only a direct call reaches: the call's arguments decide it, not a bug.

When nothing in the target calls a function (``set_default_attn_processor`` of a vendored model,
an NVML wrapper sglang never uses), or no caller passes the argument its check needs (``out=`` of
a kernel), the only way to the raise is code of the user's own that calls it: a script, a
notebook, a test. A worker's record calls such a check an internal invariant and sends the user to
a bug report; once the run knows the callers, :func:`with_direct` says instead that the direct
call's arguments trip it, and what the call must satisfy. A record with another cause (a
checkpoint's config) keeps it, but its fixes are for that call, not for a launch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extractor.prose.passed import in_place_of_the_report, internal_sentence
from extractor.prose.tags import retagged
from extractor.prose.wording import or_list

__all__ = ["DIRECT", "argument_words", "direct_arguments", "direct_entry", "with_direct"]

DIRECT = "direct"
"""A selector kind: ``(DIRECT, "score_mod", ())`` is a call passing that argument, which no caller
of the target makes (the raise is reached only by code calling the function itself); ``(DIRECT,
"kind=cross|self", ())`` a call passing ``kind`` a word other than those, which no caller does;
``(DIRECT, "", ())`` is any call, for a function nothing of the target calls."""


def direct_entry(name: str, words: Iterable[str]) -> str:
    """A :data:`DIRECT` selector's entry for argument ``name`` given a word other than ``words``."""
    return f"{name}={'|'.join(sorted(words))}"


def argument_words(entry: str) -> str:
    """An argument a direct call must pass, as said: ``score_mod`` gives "`score_mod`", and
    ``kind=cross|self`` (a word other than those, :func:`direct_entry`) "`kind` other than `cross`
    or `self`"."""
    name, sep, words = entry.partition("=")
    if not sep:
        return f"`{name}`"
    return f"`{name}` other than {or_list([f'`{w}`' for w in words.split('|')])}"


# A model class's constructor check read as the checkpoint's, for values that are its own
# parameters (``HunYuanAttention(attention_type=...)``).
_MODEL_CAUSE_RE = re.compile(r"Cause: the model \(its checkpoint or config\) \(([^)]*)\)\.")


def _argument_cause(partial: Mapping[str, Any], needed: Sequence[str]) -> str | None:
    """The cause sentence of a record that blames the checkpoint for values that are only the
    parameters a direct call must pass: those values are the call's, not a config's."""
    found = _MODEL_CAUSE_RE.search(str(partial.get("documentation") or ""))
    if found is None:
        return None
    names = set(re.findall(r"`([^`]+)`", found.group(1)))
    params = {n.partition("=")[0] for n in needed}
    return found.group(0) if names and names <= params else None


def direct_arguments(reach: Sequence[frozenset[tuple[str, str, tuple[str, ...]]]]) -> tuple[str, ...] | None:
    """When every way into a site is a direct call, the arguments such a call must pass (none for a
    function nothing calls); else None."""
    if not reach:
        return None
    needed: list[str] = []
    for conj in reach:
        direct = [s for s in conj if s[0] == DIRECT]
        if not direct:
            return None
        needed.extend(n for s in direct for n in s[1].split(",") if n)
    return tuple(dict.fromkeys(needed))


def with_direct(partial: Mapping[str, Any], where: str, needed: Sequence[str]) -> dict[str, Any]:
    """``partial`` (a check in function ``where``) stated as the arguments of a direct call, the
    only way to it: an internal check's cause becomes that call's arguments, and any other cause
    keeps its fixes for what the call passes, with no launch command."""
    internal = internal_sentence(partial.get("documentation"))
    said = internal or _argument_cause(partial, needed)
    out = dict(partial)
    passing = f" passing {' and '.join(argument_words(n) for n in needed)}" if needed else ""
    how = (
        f"no caller in sglang outside its tests calls `{where}`{passing}"
        if needed
        else f"nothing in sglang outside its tests calls `{where}`"
    )
    cond = str(partial.get("validationCode") or "").strip().rpartition("\n")[2]
    check = f"`{cond}`" if cond else "the check"
    call = f"{where.rpartition('.')[2]}(...)"
    example = (
        f"# before: a call of your own for which {check} holds\n{call}\n"
        f"# after: the same call with arguments (and an object state) for which it does not\n{call}"
    )
    if said is None:
        # The cause stands (a checkpoint's config, a value handed in), but no launch gets there:
        # the fixes are for the call of the user's own, and no launch command shows one.
        sols = [str(s) for s in partial.get("solutions") or ()]
        out["solutions"] = [
            f"No launch of sglang reaches this check ({how}): the call that failed is your own, and "
            "the fixes below are about what it passes",
            *sols,
        ]
        out["exampleFix"] = example
        return out
    out["documentation"] = str(partial["documentation"]).replace(
        said,
        "Cause: the arguments of a direct call: only code of your own that calls it (a script, a "
        "notebook, a test) reaches this check.",
    )
    out["triggerScenarios"] = (
        f"Code of your own calling `{where}` directly{passing}, with arguments (or an object state) "
        f"for which {check} holds."
    )
    out["commonSituations"] = (
        f"A script or notebook that calls `{where}` itself{passing}, outside the paths sglang runs."
    )
    own = (
        f"Check what your code passes to `{where}` (and the state of the object it calls it on): "
        f"this check fails when {check}. {how[0].upper()}{how[1:]}, so the call that failed is "
        "your own; if the traceback shows only sglang's code, report that with it"
    )
    # A checkpoint the record blamed for the call's own arguments has no fix of its own.
    out["solutions"] = in_place_of_the_report([own], partial) if internal else [own]
    out["exampleFix"] = example
    out["errorType"], out["backgroundTag"], out["handlingStrategy"] = (
        "validation",
        "invalid-value",
        "validation",
    )
    tags = retagged(partial.get("tags"), partial.get("backgroundTag"), out["backgroundTag"])
    if tags is not None:
        out["tags"] = tags
    return out
