"""Optional imports guarded at module level, and the package each stands for.

sglang imports optional packages in a module-level ``try``; the handler keeps the failure for
later (``except ImportError as e: anthropic = e`` or ``_import_error = e``) and a function far
below raises when it finds it (``if isinstance(anthropic, Exception): raise anthropic``). That
raise names no package, and the import is outside its window. :func:`guarded_imports` maps every
name such a ``try`` binds (in its body or its handler) to the package its body imports, so the
dependency cause can name what to install.
"""

from __future__ import annotations

import ast
import re
import sys

__all__ = ["guard_package", "guarded_imports", "handler_catches_import", "own_distribution"]

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})


def handler_catches_import(handler: ast.ExceptHandler) -> bool:
    t = handler.type
    if t is None:
        return True
    types = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(
        (n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")) in _IMPORT_ERRORS for n in types
    )


def _package(stmt: ast.stmt) -> str | None:
    """The top-level package an import statement loads; None for the target's own modules,
    the standard library and relative imports."""
    if isinstance(stmt, ast.ImportFrom):
        if stmt.level or not stmt.module:
            return None
        top = stmt.module.split(".", 1)[0]
    elif isinstance(stmt, ast.Import):
        top = stmt.names[0].name.split(".", 1)[0]
    else:
        return None
    return None if top == "sglang" or top in sys.stdlib_module_names else top


def _bound(stmts: list[ast.stmt]) -> list[str]:
    out: list[str] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            out.extend((a.asname or a.name).split(".", 1)[0] for a in stmt.names)
        elif isinstance(stmt, ast.Assign):
            out.extend(n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out.append(stmt.target.id)
    return out


def guarded_imports(module: ast.Module) -> dict[str, str]:
    """Name -> package for the names a module-level ``try`` that imports a package binds (in the
    body or in a handler that catches the import's failure). Never raises."""
    out: dict[str, str] = {}
    stack: list[ast.stmt] = list(reversed(module.body))
    try:
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, ast.If):
                stack.extend(reversed(stmt.body + stmt.orelse))
                continue
            if not isinstance(stmt, ast.Try):
                continue
            package = next((p for s in stmt.body if (p := _package(s)) is not None), None)
            if package is None:
                continue
            names = _bound(stmt.body)
            for h in stmt.handlers:
                if handler_catches_import(h):
                    names.extend(_bound(h.body))
            for name in names:
                out.setdefault(name, package)
    except (AttributeError, RecursionError):
        return {}
    return out


_SPEC_CALLS = frozenset({"find_spec", "is_package_available", "import_module", "_is_package_available"})


def guard_package(atoms: list[ast.expr], guarded: dict[str, str]) -> str | None:
    """The package a dependency check is about: a module its guard asks for by name
    (``importlib.util.find_spec("x")``, ``is_package_available("x")``), or a name a guarded
    import bound (``isinstance(anthropic, Exception)``, ``_import_error is not None``)."""
    for expr in atoms:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                arg = node.args[0]
                if name in _SPEC_CALLS and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    top = arg.value.split(".", 1)[0]
                    if top and top != "sglang" and top not in sys.stdlib_module_names:
                        return top
    for expr in atoms:
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and node.id in guarded:
                return guarded[node.id]
    return None


_OWN_DIST_RE = re.compile(r"^([A-Za-z0-9][\w.-]*)/python/([A-Za-z_]\w*)/")


def own_distribution(path: str) -> str | None:
    """The separately installed package a file belongs to (``sgl-kernel/python/sgl_kernel/...``
    gives ``sgl-kernel``): when its own compiled part fails to load, that package is what to
    reinstall. The main package (``python/sglang``) is never one."""
    m = _OWN_DIST_RE.match(path)
    return m.group(1) if m is not None and m.group(2) != "sglang" else None


def names_distribution(name: str, dist: str) -> bool:
    """Whether an import name names distribution ``dist``: ``sgl_kernel`` or
    ``sgl_kernel.flashmla_ops`` names ``sgl-kernel``."""
    head = name.split(".", 1)[0]
    return head.lower().replace("_", "-") == dist.lower().replace("_", "-")
