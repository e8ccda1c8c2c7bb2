"""Code reached only for a draft architecture: the name sglang gives the draft it loads.

sglang renames a checkpoint's architecture when it loads it as the draft model of speculative
decoding (``Ernie4_5_MoeForCausalLM`` becomes ``Ernie4_5_MoeForCausalLMMTP``; see
:mod:`extractor.reach.drafts`). No ``config.json`` declares such a name, so "for
`Ernie4_5_MoeForCausalLMMTP` checkpoints" sends a user looking for a checkpoint that does not
exist, and a fix that changes ``--model-path`` changes the wrong model. :func:`with_drafts` says
which model it is (the draft, from ``--speculative-draft-model-path``) and points the fix there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from extractor.reach.selectors import Selector, arch_names

__all__ = ["DRAFT_PATH_FLAG", "draft_only", "with_drafts"]

DRAFT_PATH_FLAG = "--speculative-draft-model-path"
_CHECKPOINTS_RE = re.compile(r"((?:`\w+`(?:, | or ))*`\w+`) checkpoints")


def draft_only(reach: Sequence[frozenset[Selector]], drafts: AbstractSet[str]) -> bool:
    """Whether every way into a site needs an architecture, and all of them are draft names."""
    if not reach or not drafts:
        return False
    for conj in reach:
        names = set().union(*(arch_names(s) for s in conj if s[0] == "arch"))
        if not names or not names <= drafts:
            return False
    return True


def with_drafts(partial: Mapping[str, Any], drafts: AbstractSet[str]) -> dict[str, Any]:
    """``partial`` (reached only for draft architectures ``drafts``) saying which model that is,
    with its checkpoint fix on the draft's path flag."""
    out = dict(partial)

    def said(m: re.Match[str]) -> str:
        names = set(re.findall(r"`(\w+)`", m.group(1)))
        if not names <= drafts:
            return m.group(0)
        return (
            f"{m.group(1)} drafts (the name sglang gives the draft model it loads for speculative "
            f"decoding, from `{DRAFT_PATH_FLAG}` or, for a model that carries its own draft layers, "
            "the target checkpoint; no checkpoint declares it)"
        )

    for key in ("documentation", "triggerScenarios"):
        out[key] = _CHECKPOINTS_RE.sub(said, str(out.get(key, "")))
    fix = str(out.get("exampleFix", ""))
    if "--model-path <this-checkpoint>" in fix:
        out["exampleFix"] = fix.replace(
            "--model-path <this-checkpoint>",
            f"--model-path <model> {DRAFT_PATH_FLAG} <this-draft-checkpoint>",
        ).replace(
            "--model-path <a-supported-checkpoint>", f"--model-path <model> {DRAFT_PATH_FLAG} <another-draft>"
        )
    out["solutions"] = [
        s.replace("Use a checkpoint", f"Use a draft checkpoint (`{DRAFT_PATH_FLAG}`)", 1).replace(
            "a wrong --model-path", f"a wrong `{DRAFT_PATH_FLAG}`"
        )
        if s.startswith("Use a checkpoint")
        else s
        for s in out.get("solutions", ())
    ]
    return out
