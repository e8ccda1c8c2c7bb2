"""Which exception classes a name means, and which ``except`` clauses catch a class.

An exception class gets a *key* that is the same however a file spells it: ``builtins:ValueError``
for a built-in, ``path/of/file.py:Name`` for a class the target defines (followed through imports
and re-exports by the :class:`~extractor.analysis.resolver.Resolver`), ``ext:pkg.mod.Name`` for a
class from outside the target (its import written out). The *ancestry* of a class is the set of
keys of the class and all its bases; an ``except`` clause catches a raise when one of its keys is
in that set, exactly as Python's ``isinstance`` test does.

A class from outside the target has bases nobody here can read: its ancestry is *open*. An open
ancestry is still caught by ``except Exception`` (every library error class derives from it; the
few built-ins that do not are read from the running interpreter) and by ``except BaseException``
or a bare ``except``, never by a named class it was not written as.
"""

from __future__ import annotations

import ast

from extractor.analysis.handled_facts import BUILTIN_EXC, Ancestry
from extractor.analysis.imports import Imported, imports_of
from extractor.analysis.resolver import Resolver

__all__ = ["Ancestry", "ancestry_of", "handler_keys", "key_of"]

# Standard-library classes the target names through their module, with the built-in they are.
_STDLIB = {
    "asyncio.TimeoutError": "TimeoutError",
    "asyncio.CancelledError": "BaseException",
    "asyncio.exceptions.CancelledError": "BaseException",
    "asyncio.exceptions.TimeoutError": "TimeoutError",
    "concurrent.futures.TimeoutError": "TimeoutError",
    "concurrent.futures.CancelledError": "Exception",
    "socket.timeout": "TimeoutError",
    "socket.error": "OSError",
    "json.JSONDecodeError": "ValueError",
    "json.decoder.JSONDecodeError": "ValueError",
    "queue.Empty": "Exception",
    "queue.Full": "Exception",
    "subprocess.CalledProcessError": "Exception",
    "subprocess.TimeoutExpired": "Exception",
    "shutil.Error": "OSError",
    "pickle.PickleError": "Exception",
    "struct.error": "Exception",
}
_MAX_DEPTH = 12


def _builtin_keys(name: str) -> frozenset[str]:
    cls = BUILTIN_EXC[name]
    return frozenset(f"builtins:{k.__name__}" for k in cls.__mro__ if k.__name__ in BUILTIN_EXC)


_IMPORTS: list[tuple[object, dict[str, Imported]]] = []


def _imports(resolver: Resolver) -> dict[str, Imported]:
    if resolver.imports:
        return resolver.imports
    # Resolvers built without the other modules keep no imports; the last file's are kept here
    # (holding the parsed file itself, so that its identity cannot be taken by another one).
    if _IMPORTS and _IMPORTS[0][0] is resolver.parsed:
        return _IMPORTS[0][1]
    found = imports_of(resolver.parsed.tree)
    _IMPORTS[:] = [(resolver.parsed, found)]
    return found


def _external(resolver: Resolver, text: str) -> str:
    """``ext:`` plus the dotted name ``text`` means through the file's imports."""
    head, _, rest = text.partition(".")
    imported = _imports(resolver).get(head)
    if imported is None:
        return f"ext:{text}"
    if imported.name is None:
        full = imported.module
    else:
        full = f"{imported.module}.{imported.name}" if imported.module else imported.name
    return f"ext:{full}.{rest}" if rest else f"ext:{full}"


def key_of(resolver: Resolver, text: str) -> tuple[str, tuple[Resolver, ast.ClassDef] | None]:
    """The key of the class ``text`` names in the resolver's file, and its definition when the target has it."""
    local = resolver.index.classes.get(text)
    if local is not None:
        return f"{resolver.parsed.path}:{text}", (resolver, local)
    if "." not in text and text not in _imports(resolver):
        alias = resolver.index.constants.get(text)
        if isinstance(alias, ast.Name | ast.Attribute) and ast.unparse(alias) != text:
            return key_of(resolver, ast.unparse(alias))
        if text in BUILTIN_EXC:
            return f"builtins:{text}", None
        return f"ext:{text}", None
    found = resolver.definition(text, 0) if "." not in text else resolver.foreign(text)
    if found is not None:
        owner, node = found
        if isinstance(node, ast.ClassDef):
            return f"{owner.parsed.path}:{node.name}", (owner, node)
    return _external(resolver, text), None


def ancestry_of(resolver: Resolver, text: str) -> Ancestry:
    """The ancestry of the class ``text`` names in the resolver's file."""
    keys: set[str] = set()
    is_open = False
    todo: list[tuple[Resolver, str, int]] = [(resolver, text, 0)]
    while todo:
        owner, name, depth = todo.pop()
        key, found = key_of(owner, name)
        if key in keys:
            continue
        keys.add(key)
        if key.startswith("builtins:"):
            keys |= _builtin_keys(key.removeprefix("builtins:"))
            continue
        if key.startswith("ext:"):
            builtin = _STDLIB.get(key.removeprefix("ext:"))
            if builtin is not None:
                keys |= _builtin_keys(builtin)
            else:
                is_open = True
            continue
        if found is None or depth >= _MAX_DEPTH:
            is_open = True
            continue
        where, node = found
        if not node.bases:
            continue  # a class with no base is no exception class; it adds nothing
        for base in node.bases:
            if isinstance(base, ast.Name | ast.Attribute):
                todo.append((where, ast.unparse(base), depth + 1))
            else:
                is_open = True
    return Ancestry(frozenset(keys), is_open)


def handler_keys(resolver: Resolver, node: ast.expr | None) -> tuple[str, ...] | None:
    """The keys an ``except`` clause names (``()`` for a bare ``except``); None when one is not a class name."""
    if node is None:
        return ()
    if isinstance(node, ast.Name) and not isinstance(
        resolver.index.constants.get(node.id), ast.Name | ast.Attribute
    ):
        value = resolver.index.constants.get(node.id)
        if isinstance(value, ast.Tuple):
            node = value  # ``except RETRYABLE:`` with ``RETRYABLE = (A, B)`` at module level
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    out = []
    for item in items:
        if not isinstance(item, ast.Name | ast.Attribute):
            return None
        text = ast.unparse(item)
        if text.split(".", 1)[0] in ("self", "cls"):
            return None
        out.append(key_of(resolver, text)[0])
    return tuple(out)
