"""Architectures a checkpoint only takes on as the draft model of speculative decoding.

sglang renames a checkpoint's architecture when it loads it as a draft (the MTP / NextN layer of
the same checkpoint)::

    if is_draft_model and self.hf_config.architectures[0] == "FooForCausalLM":
        self.hf_config.architectures[0] = "FooForCausalLMNextN"

Code reached only for such an architecture runs only when a draft model is loaded, which the code
that builds a draft decides (``ModelRunner(..., is_draft_worker=True)``): the flags that select
those builders select the draft architectures too.
"""

from __future__ import annotations

import ast
import re

__all__ = ["builds_draft", "draft_architectures"]

# ``is_draft_worker=True``, ``is_draft_model=True``; not ``is_draft_override``, which only swaps a setting.
_DRAFT_KEYWORD = re.compile(r"^is_draft(_worker|_model)?$")


def _mentions_draft(node: ast.expr) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and "draft" in sub.id.lower():
            return True
        if isinstance(sub, ast.Attribute) and "draft" in sub.attr.lower():
            return True
    return False


def _architectures_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Subscript):
        target = target.value
    return isinstance(target, ast.Attribute) and target.attr == "architectures"


def draft_architectures(stmt: ast.If) -> list[str]:
    """The architecture names an ``if`` on a draft test assigns (in its own body)."""
    if not _mentions_draft(stmt.test):
        return []
    out: list[str] = []
    # Nested choices inside the draft branch (which draft head to load) are drafts as well.
    for node in (n for s in stmt.body for n in ast.walk(s)):
        if not isinstance(node, ast.Assign) or not any(_architectures_target(t) for t in node.targets):
            continue
        value = node.value
        items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value not in out:
                out.append(item.value)
    return out


def builds_draft(call: ast.Call, callee: str) -> bool:
    """Whether a call builds the draft side of speculative decoding: a constructor (or a class's
    factory method) given ``is_draft_...=True``. Other functions that take the same keyword only
    compute something for a draft that already exists. ``callee`` is the called expression's dotted
    text (``ModelConfig.from_server_args``)."""
    if not any(part[:1].isupper() for part in callee.split(".")):
        return False
    return any(
        kw.arg is not None
        and _DRAFT_KEYWORD.match(kw.arg) is not None
        and isinstance(kw.value, ast.Constant)
        and kw.value.value is True
        for kw in call.keywords
    )
