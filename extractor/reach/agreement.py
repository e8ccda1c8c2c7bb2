"""Flags whose value must agree with one the code derives from elsewhere (the model's own config).

sglang fills some settings from the checkpoint when the flag is not given, and refuses a given value
that disagrees with it::

    if self.quantization is None:
        self.quantization = quant_method          # what the checkpoint's config declares
    elif self.quantization != quant_method:
        ... raise ValueError("... does not match ...")

For such a flag the user cannot simply pick another value to leave a code path: the value is the
checkpoint's. Reach then words the way out as another checkpoint, never as another flag value.
"""

from __future__ import annotations

import ast

from extractor.prose.declarations import unset_subject

__all__ = ["agreed_attribute"]


def agreed_attribute(stmt: ast.If) -> str | None:
    """The attribute ``x`` of ``if o.x is None: o.x = <derived>`` / ``elif o.x != <derived>: ... raise``.

    The value assigned must be computed (a name, call or attribute), not a literal: a literal is a
    default the code picks, which a user may still override with any value the check accepts.
    """
    unset = unset_subject(stmt.test)
    if unset is None:
        return None
    subject = ast.dump(unset)
    assigned = [
        s.value
        for s in stmt.body
        if isinstance(s, ast.Assign)
        and any(ast.dump(t).replace("Store", "Load") == subject for t in s.targets)
    ]
    if not assigned or not all(isinstance(v, ast.Name | ast.Attribute | ast.Call) for v in assigned):
        return None
    if len(stmt.orelse) != 1 or not isinstance(stmt.orelse[0], ast.If):
        return None
    other = stmt.orelse[0]
    check = other.test
    if not (
        isinstance(check, ast.Compare)
        and len(check.ops) == 1
        and isinstance(check.ops[0], ast.NotEq)
        and ast.dump(check.left) == subject
        and any(isinstance(n, ast.Raise) for n in ast.walk(other))
    ):
        return None
    return unset.attr
