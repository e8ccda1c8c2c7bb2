"""The functions of other packages that the ``try`` block of a handing-on raise calls.

``try: self.mr = register_mr(buffer) except TypeError as err: raise TypeError("Register Buffer
Error.") from err``: what failed is ``simm.kv.register_mr``, a function of the ``simm`` package,
not a state of sglang's own. The record names that package: its install or its version is what
the user checks.

Only calls through the module's own imports count, and only of packages outside the standard
library and outside the few the serving stack is built on (a ``torch`` op failing is sglang
handing it something it does not accept, not torch missing).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping

from extractor.analysis.imports import Imported
from extractor.analysis.sites import RawSite
from extractor.analysis.walk import dotted_name

__all__ = ["library_calls", "parsed_values"]

# Packages whose failures are about what sglang hands them, not about the package.
_FOUNDATIONS = frozenset({"sglang", "sgl_kernel", "torch", "numpy", "triton", "typing_extensions"})
_MAX_CALLS = 3


def library_calls(raw: RawSite, imports: Mapping[str, Imported]) -> tuple[str, ...]:
    """``("simm.kv.register_mr",)``: what the ``try`` block around the site's handler calls of
    other packages, dotted by where it is imported from; empty when it calls none."""
    tried = _tried(raw)
    if tried is None:
        return ()
    out: list[str] = []
    # An exception the block builds to raise itself is no call that failed.
    raised = {id(n.exc) for n in _own_nodes(tried.body) if isinstance(n, ast.Raise) and n.exc is not None}
    for node in _own_nodes(tried.body):
        if not isinstance(node, ast.Call) or id(node) in raised:
            continue
        dotted = dotted_name(node.func)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        found = imports.get(head)
        if found is None or found.level or not found.module:
            continue
        full = ".".join(p for p in (found.module, found.name, rest) if p)
        top = full.split(".", 1)[0]
        if top in _FOUNDATIONS or top in sys.stdlib_module_names:
            continue
        if full not in out:
            out.append(full)
        if len(out) == _MAX_CALLS:
            break
    return tuple(out)


# Parsers of text, by the name a call spells them with, and the format each reads.
_PARSERS = {
    "json.loads": "JSON",
    "json.load": "JSON",
    "yaml.safe_load": "YAML",
    "yaml.load": "YAML",
    "tomllib.loads": "TOML",
    "ast.literal_eval": "Python literal",
    "literal_eval": "Python literal",
    "int": "integer",
    "float": "number",
}


def parsed_values(raw: RawSite) -> tuple[tuple[str, ast.expr], ...]:
    """``(format, argument)`` of each parse of a text (``json.loads(x)``, ``int(x)``) that the ``try``
    block around the site's handler makes: what the caught error may be about."""
    tried = _tried(raw)
    if tried is None:
        return ()
    out: list[tuple[str, ast.expr]] = []
    for node in _own_nodes(tried.body):
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            fmt = _PARSERS.get(dotted_name(node.func) or "")
            if fmt is not None:
                out.append((fmt, node.args[0]))
    return tuple(out[:_MAX_CALLS])


def _tried(raw: RawSite) -> ast.Try | ast.TryStar | None:
    """The ``try`` whose handler holds the site, innermost, within the site's function."""
    for frame in reversed(raw.frames[:-1]):
        if isinstance(frame.stmt, ast.Try | ast.TryStar) and frame.branch.startswith("handler:"):
            return frame.stmt
    return None


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of ``body``, nested functions, lambdas and classes left out (they run elsewhere)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
