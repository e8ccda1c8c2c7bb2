"""Dataset-wide figures for the user-facing prose of a records file (JSONL).

    python bench/advice_figures.py RECORDS.jsonl

* double negations in ``validationCode`` (on the AST: ``not not x``, ``not x not in y``,
  ``not x is not y``, ``not x != y``);
* records whose solutions are all restatements of the guard ("make sure `...` holds",
  "so that `...` holds instead", "report it upstream", "avoid calling"), and none names a flag,
  an env var, a package to install or a value to set;
* ``exampleFix``es that wrap the call in ``if <guard>:``;
* ``commonSituations`` that quote none of the code's own words (the comment above the check, a
  docstring, the message): the why is then a fixed sentence;
* records whose only solutions restate the check as "Change `--x` ... so that `<test>`", and
  ``exampleFix``es that end in an ``<accepted-value>`` placeholder;
* documentation that leads with a raw ``not not`` or a "that is" gloss (before the literal forms
  it lists last);
* internal causes, and how many of them offer a workaround (turning off what selects the path).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

_RESTATE_RE = re.compile(
    r"make sure `.*` holds|so that `.*` holds instead|report it upstream|avoid calling|"
    r"one where `|holds when .* runs|avoid the inputs",
    re.I,
)
_ACTION_RE = re.compile(r"--[a-z]|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|pip install|config\.json|check_env")
_NEGATED_CMP = (ast.NotIn, ast.IsNot, ast.NotEq)


def double_negation(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = node.operand
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
                return True
            if (
                isinstance(inner, ast.Compare)
                and len(inner.ops) == 1
                and isinstance(inner.ops[0], _NEGATED_CMP)
            ):
                return True
    return False


def restatement(solution: str) -> bool:
    return bool(_RESTATE_RE.search(solution)) and not _ACTION_RE.search(solution)


_CHANGE_SO_THAT_RE = re.compile(r"^Change `.*` in the launch command so that `")
_RAW_NOT_RE = re.compile(r"`not not |that is, `")


def main(path: str) -> int:
    n = dn = rest = wrap = wordless = 0
    change_only = placeholder = raw_lead = internal = internal_way = 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        rec = obj.get("record", obj)
        n += 1
        dn += double_negation(rec.get("validationCode") or "")
        sols = rec.get("solutions") or []
        rest += bool(sols) and all(restatement(s) for s in sols)
        wrap += bool(re.search(r"^if .*:\s*$", rec.get("exampleFix") or "", re.M))
        wordless += '"' not in (rec.get("commonSituations") or "")
        change_only += bool(sols) and all(_CHANGE_SO_THAT_RE.match(s) for s in sols)
        placeholder += "<accepted-value>" in (rec.get("exampleFix") or "")
        lead = (rec.get("documentation") or "").partition("As the tests on the path read")[0]
        raw_lead += bool(_RAW_NOT_RE.search(lead))
        if "Cause: an internal invariant" in (rec.get("documentation") or ""):
            internal += 1
            internal_way += len(sols) > 1
    print(f"records                      {n}")
    print(f"validationCode double neg.   {dn}")
    print(f"solutions all restatements   {rest} ({rest / max(n, 1):.1%})")
    print(f"exampleFix 'if <guard>:'     {wrap} ({wrap / max(n, 1):.1%})")
    print(f"why without the code's words {wordless} ({wordless / max(n, 1):.1%})")
    print(f"solutions only 'Change X so that <test>' {change_only} ({change_only / max(n, 1):.1%})")
    print(f"exampleFix with <accepted-value> {placeholder} ({placeholder / max(n, 1):.1%})")
    print(f"prose lead with `not not` / 'that is' {raw_lead} ({raw_lead / max(n, 1):.1%})")
    print(f"internal causes                {internal}, with a workaround {internal_way}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
