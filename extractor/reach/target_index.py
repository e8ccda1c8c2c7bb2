"""The whole-target index: every file's facts joined into definitions, a class hierarchy and callers.

Built in the parent process from the per-file facts (cheap: no parsing), once per run. Calls are
resolved to definitions where the receiver is known (a local or imported name, ``self.`` methods
through the class hierarchy and the overrides below it, ``super()``, constructors, and receivers
whose class is read from attributes, annotations, constructions and factories' returns: see
:mod:`extractor.reach.receiver_types`); otherwise a call is tied to the one definition of that
name when exactly one exists, with lower confidence. A definition named as a value (a class in a
dict, a callback) counts as called by the code that names it. Calls from test files are no way in.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from extractor.reach.facts import FACTORY, LITERAL, Atom, Call, Def, FileFacts
from extractor.reach.receiver_types import ReceiverTypes

__all__ = ["RUN_BY_FRAMEWORK", "Edge", "TargetIndex"]

_MAX_REEXPORT = 3
RUN_BY_FRAMEWORK = frozenset({"forward", "extra_repr"})
"""Methods torch calls itself (``module(x)`` runs ``forward``)."""
_PLAIN_BASES = frozenset(
    {"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol"}
)
"""Bases whose own code calls no method of a subclass by its name."""


@dataclass(frozen=True)
class Edge:
    """A resolved call: ``caller`` calls the node this edge is filed under."""

    caller: str
    path: str
    guards: tuple[tuple[str, ...], ...]
    catches: tuple[str, ...] | None
    confident: bool
    down: bool = False
    """``self.m()`` that runs a subclass's override: only that subclass's instances take it, so the
    caller's own ways in (those of every subclass) do not carry over."""
    on_class: bool = False
    """The call names the class it calls the method on (``LayerScatterModes.init_new()``,
    ``cls.m()``): no instance, and no class picked elsewhere, is involved."""
    given: frozenset[str] | None = None
    """The parameters of the called definition the call passes something other than a literal
    ``None`` for; None when that is not known (an unpacked argument, an unknown signature)."""
    forwards: tuple[tuple[str, str], ...] = ()
    """``(parameter, name)`` for each parameter the call fills with a bare name of the caller
    (``f(out=out)``): when that name is the caller's own optional parameter, the call gives it
    only where the caller was given it."""
    words: tuple[tuple[str, str], ...] = ()
    """``(parameter, word)`` for each parameter the call can only fill with some one-word strings
    (a literal, a conditional of literals, or a local only ever given such), one row per word."""

    def only_words(self, name: str, accepted: AbstractSet[str]) -> bool:
        """Whether the call fills parameter ``name`` with nothing but words of ``accepted``."""
        given = [w for p, w in self.words if p == name]
        return bool(given) and all(w in accepted for w in given)

    def may_pass(self, names: Iterable[str]) -> bool:
        """Whether the call may give every parameter of ``names`` (an unknown signature may). A
        name ending in ``?`` must be given a value that may test true: a literal ``False`` is not."""
        given = self.given
        if given is None:
            return True
        return all(
            n.rstrip("?") in given and not (n.endswith("?") and f"!{n.rstrip('?')}" in given) for n in names
        )


@dataclass
class TargetIndex:
    """Definitions keyed ``module:qualname``, their files, bases, subclasses and callers."""

    files: dict[str, FileFacts] = field(default_factory=dict)
    """module -> facts."""
    defs: dict[str, Def] = field(default_factory=dict)
    path_of: dict[str, str] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)
    subclasses: dict[str, list[str]] = field(default_factory=dict)
    methods: dict[str, dict[str, str]] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    attrs: dict[str, dict[str, str]] = field(default_factory=dict)
    """class node -> attribute -> type expression of what its methods store there."""
    _calls_by_name: dict[str, list[tuple[FileFacts, list[Any]]]] = field(default_factory=dict)
    _factory_built: dict[str, list[tuple[FileFacts, list[Any]]]] = field(default_factory=dict)
    """Class name -> the calls of a factory's value that build it (see :meth:`_file_factory_calls`)."""
    named: set[str] = field(default_factory=set)
    """Attribute names some file looks up by string (``getattr(x, "name")``), outside tests."""
    _callers: dict[str, list[Edge]] = field(default_factory=dict)
    _resolved: set[str] = field(default_factory=set)
    _built_by_cls: set[tuple[str, str]] = field(default_factory=set)
    _locals: dict[str, dict[str, dict[str, tuple[str, ...]]]] = field(default_factory=dict)
    _receivers: ReceiverTypes | None = None
    _families: dict[str, list[str]] = field(default_factory=dict)
    _target_memo: dict[tuple[str, str, str, str, bool], tuple[list[str], bool]] = field(default_factory=dict)
    _aliases: dict[str, set[str]] = field(default_factory=dict)
    """A definition's short name -> the other names files import or bind it under."""
    _stored: dict[tuple[str, str], list[tuple[str, tuple[Atom, ...]]]] = field(default_factory=dict)
    _unresolved: dict[str, list[Edge]] = field(default_factory=dict)
    ops: dict[str, list[str]] = field(default_factory=dict)
    """Custom op name -> the functions registered under it (``torch.ops.<namespace>.<name>``)."""
    op_names: dict[str, list[str]] = field(default_factory=dict)
    """Function node -> the custom op names it is registered under."""
    abstract: set[str] = field(default_factory=set)
    """Method nodes declared ``@abstractmethod``."""
    importers: dict[str, list[Edge]] = field(default_factory=dict)
    """module -> the import statements that run it (their function, or ``<module>``, and guards)."""
    dynamic: set[str] = field(default_factory=set)
    """Modules, and name prefixes ending in ``.``, that some call imports by a string."""
    mentioned: set[str] = field(default_factory=set)
    """Names some file (tests aside) spells other than as a call (:attr:`FileFacts.mentions`)."""
    _ends: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """The fixed starts and ends of names f-strings build (``forward_``, ``_communicator``)."""

    @classmethod
    def build(cls, facts: Iterable[FileFacts]) -> TargetIndex:
        """Join the facts (given in any order; the result depends only on their set)."""
        index = cls()
        for f in sorted(facts, key=lambda f: f.path):
            if f.module in index.files:
                continue  # two paths, one module name: the first path wins, stably
            index.files[f.module] = f
            index.abstract.update(f"{f.module}:{q}" for q in f.abstract)
            for d in f.defs:
                node = f"{f.module}:{d.qualname}"
                index.defs[node] = d
                index.path_of[node] = f.path
                if d.owner:
                    index.methods.setdefault(f"{f.module}:{d.owner}", {})[d.qualname.rpartition(".")[2]] = (
                        node
                    )
                if d.attrs:
                    index.attrs[node] = dict(d.attrs)
                if "<locals>" not in d.qualname:
                    index.by_name.setdefault(d.qualname.rpartition(".")[2], []).append(node)
        for module, f in index.files.items():
            for d in f.defs:
                if d.kind != "c":
                    continue
                node = f"{module}:{d.qualname}"
                for base in d.bases:
                    found = index.resolve_dotted(base, f, d.owner or "<module>")
                    if found is not None and index.defs[found].kind == "c" and found != node:
                        index.bases.setdefault(node, []).append(found)
                        index.subclasses.setdefault(found, []).append(node)
        for f in index.files.values():
            for op, target in f.ops:
                found = index.resolve_dotted(target, f, "<module>")
                if found is not None and index.defs[found].kind == "f":
                    index.ops.setdefault(op, []).append(found)
                    index.op_names.setdefault(found, []).append(op)
        # Calls are only filed by the name they call; a name's calls are resolved the first time
        # someone asks who calls a definition of that name (most never are).
        index._receivers = ReceiverTypes(index)
        for f in index.files.values():
            if is_test_path(f.path):
                continue  # a test's call is not a way a user gets there
            for name, calls in f.calls.items():
                index._calls_by_name.setdefault(name, []).append((f, calls))
            index.named.update(f.named)
            index.dynamic.update(f.dynamic)
            index.mentioned.update(f.mentions)
            for qual, dotted, *ids in f.imported:
                target = dotted if dotted in index.files else dotted.rpartition(".")[0]
                if target in index.files and target != f.module:
                    guards = tuple(f.atoms[int(i)] for i in ids)
                    index.importers.setdefault(target, []).append(
                        Edge(f"{f.module}:{qual}", f.path, guards, None, True)
                    )
            for local, target in f.imports.items():
                short = target.rpartition(".")[2]
                if short != local and not local.startswith("*"):
                    # ``from m import f as g`` (or ``g = f``): calls of ``g`` are filed under ``g``.
                    index._aliases.setdefault(short, set()).add(local)
        index._file_factory_calls()
        # A name built by gluing a value to a piece of an f-string joins them with ``_``
        # (``f"forward_{key}"``, ``f"{kind}_communicator"``); a unit or a word glued to a number
        # (``f"{secs:.1f}s"``, ``f"gpu{i}"``) builds no name to call.
        index._ends = (
            tuple(sorted(m[:-1] for m in index.mentioned if m.endswith("_*"))),
            tuple(sorted(m[1:] for m in index.mentioned if m.startswith("*_"))),
        )
        return index

    def _file_factory_calls(self) -> None:
        """``get_pool_cls(device)(size, layout)``: each class the factory returns by name
        (``return HostPool``) is built with these arguments, as ``pkg.mod.HostPool(size, layout)``
        would be. Such a call says what the constructor is given (:meth:`calls_named`); it is no
        way in of its own, since the factory's references (under its own tests) already are."""
        for key in sorted(k for k in self._calls_by_name if k.endswith(FACTORY)):
            for f, calls in self._calls_by_name.pop(key):
                for raw in calls:
                    call = Call._make(raw)
                    for cls in self._returned_classes(f, call):
                        module, _, qual = cls.partition(":")
                        built = call._replace(callee=f"{module}.{qual}")
                        self._factory_built.setdefault(qual.rpartition(".")[2], []).append((f, [list(built)]))

    def _returned_classes(self, f: FileFacts, call: Call) -> list[str]:
        factory = self.resolve_dotted(call.callee.removesuffix(FACTORY), f, call.caller)
        d = self.defs.get(factory) if factory is not None else None
        home = self.files.get(factory.partition(":")[0]) if factory is not None else None
        if d is None or d.kind != "f" or home is None:
            return []
        out = []
        for name in d.returns.split("|") if d.returns else ():
            # ``Foo()`` is an instance: calling it runs ``__call__``, it builds nothing.
            found = self.resolve_dotted(name, home, d.qualname) if name and "(" not in name else None
            if found is not None and self.defs[found].kind == "c":
                out.append(found)
        return sorted(set(out))

    def imported_by_name(self, module: str) -> bool:
        """Whether some call imports ``module`` by a string (its own name, or a prefix of it)."""
        return module in self.dynamic or any(p.endswith(".") and module.startswith(p) for p in self.dynamic)

    def callers(self, node: str) -> list[Edge]:
        """Every resolved call of ``node`` (a function, method or class: its constructions)."""
        # A custom op's function is also called under the op's name (``torch.ops.sglang.x``).
        short = node.rpartition(":")[2].rpartition(".")[2]
        # ``Fn.apply(...)`` of a ``torch.autograd.Function`` runs its ``forward``.
        also = ("apply",) if short == "forward" else ()
        d = self.defs.get(node)
        if d is not None and d.kind == "c":
            also = (*also, "cls")  # ``return cls(...)`` in a class method builds the class
        todo = [short, *also, *self.op_names.get(node, ())]
        while todo:
            name = todo.pop(0)
            if name in self._resolved:
                continue
            self._resolved.add(name)
            todo.extend(sorted(self._aliases.get(name, ())))
            for f, calls in self._calls_by_name.get(name, ()):
                for raw in calls:
                    call = Call._make(raw)
                    self._add_call(f.module, f, call)
                    if call.stored:
                        # ``self.x = f``: the calls of ``self.x(...)`` call it too.
                        todo.append(call.stored)
        return self._callers.get(node, [])

    def built_by_cls(self, method: str, cls: str) -> bool:
        """Whether class method ``method`` builds ``cls`` through ``cls(...)``."""
        if "cls" not in self._resolved:
            self._resolved.add("cls")
            for f, calls in self._calls_by_name.get("cls", ()):
                for raw in calls:
                    self._add_call(f.module, f, Call._make(raw))
        return (method, cls) in self._built_by_cls

    def calls_named(self, name: str) -> list[tuple[FileFacts, list[Any]]]:
        """Every file's calls filed under ``name`` (plain lists: ``Call._make`` reads one), with the
        calls of a factory's value that build a class of that name."""
        return [*self._calls_by_name.get(name, []), *self._factory_built.get(name, [])]

    def is_named(self, name: str) -> bool:
        """Whether a call, a reference or a ``getattr`` lookup outside tests names ``name``."""
        return name in self.named or name in self._calls_by_name

    def called_by_namesakes_only(self, name: str) -> bool:
        """Whether every call that spells ``name`` is made by a method of that same name (a wrapper
        handing the call on, ``def step(self): return self.inner.step()``) and nothing references
        or looks it up: the name reaches the chain only from outside the target, if at all."""
        if name in self.named:
            return False
        found = False
        for _f, calls in self._calls_by_name.get(name, ()):
            for raw in calls:
                call = Call._make(raw)
                if call.ref or call.caller.rpartition(".")[2] != name:
                    return False
                found = True
        return found

    def lands_elsewhere(self, node: str) -> bool:
        """Whether every call and reference that spells ``node``'s name resolves, receiver known,
        to other definitions, and no ``getattr`` lookup names it: nothing of the target runs it."""
        name = node.rpartition(":")[2].rpartition(".")[2]
        if name.startswith("__") or name in self.named:
            return False
        for f, calls in self._calls_by_name.get(name, ()):
            for raw in calls:
                targets, confident = self._targets(f.module, f, Call._make(raw))
                if not confident or node in targets:
                    return False
        return True

    def unresolved_calls(self, node: str) -> list[Edge]:
        """The calls spelling the name of method or function ``node`` that the index ties to no
        definition (``model.load_weights(w)``: the receiver's class is unknown, and many classes
        define it), as edges to ``node``: each may run it, or another definition of the name. A
        call naming another class (``Other.load_weights(self, w)``) is left out."""
        found = self._unresolved.get(node)
        if found is not None:
            return found
        d = self.defs.get(node)
        name = node.rpartition(":")[2].rpartition(".")[2]
        out: list[Edge] = []
        if d is not None and d.kind == "f":
            cls = f"{node.partition(':')[0]}:{d.owner}" if d.owner else ""
            lineage = {
                c.rpartition(":")[2].rpartition(".")[2]
                for c in ({cls} | self.ancestors(cls) | self.descendants(cls) if cls else set())
            }
            for spelled in (name, *sorted(self._aliases.get(name, ()))):
                for f, calls in self._calls_by_name.get(spelled, ()):
                    for raw in calls:
                        call = Call._make(raw)
                        if call.ref or self._targets(f.module, f, call)[0]:
                            continue  # a reference, or tied to definitions: an edge of theirs
                        parts = call.callee.split(".")
                        qualifier = parts[-2] if len(parts) >= 2 else ""
                        if cls and qualifier[:1].isupper() and qualifier not in lineage:
                            continue
                        given, forwards, words = self._passes(f, node, call, parts)
                        out.append(
                            Edge(
                                f"{f.module}:{call.caller}",
                                f.path,
                                tuple(f.atoms[i] for i in call.guards),
                                None if call.catches is None else tuple(call.catches),
                                False,
                                given=given,
                                forwards=forwards,
                                words=words,
                            )
                        )
        self._unresolved[node] = out
        return out

    def run_unseen(self, name: str) -> bool:
        """Whether something no call of the target shows may run a method of ``name``: Python (a
        dunder), torch (:data:`RUN_BY_FRAMEWORK`), or a lookup by string."""
        return name.startswith("__") or name in RUN_BY_FRAMEWORK or name in self.named

    def named_calls_may_pass(self, node: str, names: Iterable[str]) -> bool:
        """Whether some call of :meth:`unresolved_calls` may give ``node`` every parameter of
        ``names`` (see :meth:`Edge.may_pass`). True when there is no such call, or something else
        may run it (:meth:`run_unseen`), with what its own callers pass."""
        if self.run_unseen(node.rpartition(":")[2].rpartition(".")[2]):
            return True
        edges = self.unresolved_calls(node)
        wanted = tuple(names)
        return not edges or any(e.may_pass(wanted) for e in edges)

    def uncalled(self, node: str) -> bool:
        """Whether nothing of the target (tests aside) can run function ``node``: other modules
        import its module, but no file calls, names, looks up or spells its name, no decorator
        registers it, and no class it is a method of derives from another library's class (whose
        code may call a method by its name) while its other methods are called."""
        d = self.defs.get(node)
        if d is None or d.kind != "f" or d.decorated or node in self.op_names:
            return False
        name = d.qualname.rpartition(".")[2]
        if is_test_path(self.path_of.get(node, "")) or name.startswith("test"):
            return False  # a test runner runs it
        module = node.partition(":")[0]
        if not self.importers.get(module):
            # A module no other one imports is run as a script or loaded by a name we cannot read:
            # who calls into it is unknown, not absent.
            return False
        starts, ends = self._ends
        if (
            name.startswith("__")
            or self._spelled(name)
            or any(self._spelled(a) for a in self._aliases.get(name, ()))
            or name.startswith(starts)
            or name.endswith(ends)
        ):
            return False
        if "<locals>" in d.qualname:
            # A nested function is handed out by its name as a value (a callback, a patch
            # ``setattr(Loader, "_prepare", prepare)``), which no call spells.
            return False
        if not d.owner:
            return True
        cls = f"{module}:{d.owner}"
        if any(self._foreign_base(c) for c in (cls, *self.ancestors(cls))):
            return False
        # A class used through none of its methods may be handed to code we cannot read; one whose
        # other methods are called is used by name, and this one is not among them.
        return any(
            other != name and not other.startswith("__") and self._spelled(other)
            for other in self.methods.get(cls, {})
        )

    def _spelled(self, name: str) -> bool:
        """Whether a file (tests aside) calls, references, looks up or otherwise spells ``name``."""
        return self.is_named(name) or name in self.mentioned

    def _foreign_base(self, cls: str) -> bool:
        """Whether class ``cls`` names a base that is not one of the target's and not a plain one."""
        d = self.defs.get(cls)
        if d is None:
            return True
        own = len(self.bases.get(cls, []))
        return len([b for b in d.bases if b not in _PLAIN_BASES]) > own

    # ----------------------------------------------------------------- resolution

    def pins(self, f: FileFacts, call: Call, node: str) -> bool:
        """Whether ``call`` (made in file ``f``) runs ``node`` and nothing else, its receiver known."""
        targets, confident = self._targets(f.module, f, call)
        return confident and targets == [node]

    def resolve_dotted(self, dotted: str, f: FileFacts, scope: str, hops: int = 0) -> str | None:
        """The definition a dotted name means in file ``f`` inside ``scope``, if it is in the target."""
        module = f.module
        if "." not in dotted:
            inner = f"{module}:{scope}.<locals>.{dotted}"
            if inner in self.defs:
                return inner
        local = f"{module}:{dotted}"
        if local in self.defs:
            return local
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            target = self.files.get(".".join(parts[:cut]))
            if target is None:
                continue
            rest = parts[cut:]
            node = f"{target.module}:{'.'.join(rest)}"
            if node in self.defs:
                return node
            again = target.imports.get(rest[0])
            if again is not None and hops < _MAX_REEXPORT:
                return self.resolve_dotted(".".join([again, *rest[1:]]), target, "<module>", hops + 1)
            if again is None and hops < _MAX_REEXPORT:
                # ``from .x import *`` in a package's ``__init__``: the name is x's.
                stars = sorted((k for k in target.imports if k.startswith("*")), key=lambda k: int(k[1:]))
                for key in stars:
                    found = self.resolve_dotted(
                        ".".join([target.imports[key], *rest]), target, "<module>", hops + 1
                    )
                    if found is not None:
                        return found
            return None
        return None

    def owner_class(self, module: str, scope: str) -> str | None:
        """The class whose method ``scope`` is (or encloses it), as a node."""
        qual = scope
        while qual:
            d = self.defs.get(f"{module}:{qual}")
            if d is not None and d.owner:
                return f"{module}:{d.owner}"
            if "." not in qual:
                return None
            qual = qual.rsplit(".<locals>.", 1)[0] if ".<locals>." in qual else ""
        return None

    def lookup_method(self, cls: str, name: str, seen: set[str] | None = None) -> str | None:
        """``name`` on class node ``cls`` or the first base that defines it (depth first, like a simple MRO)."""
        seen = seen if seen is not None else set()
        if cls in seen:
            return None
        seen.add(cls)
        found = self.methods.get(cls, {}).get(name)
        if found is not None:
            return found
        for base in self.bases.get(cls, []):
            found = self.lookup_method(base, name, seen)
            if found is not None:
                return found
        return None

    def overrides(self, cls: str, name: str) -> list[str]:
        """Definitions of ``name`` in the classes below ``cls`` (what ``self.name()`` may also run)."""
        out: list[str] = []
        todo = list(self.subclasses.get(cls, []))
        seen: set[str] = set()
        while todo:
            sub = todo.pop()
            if sub in seen:
                continue
            seen.add(sub)
            found = self.methods.get(sub, {}).get(name)
            if found is not None:
                out.append(found)
            todo.extend(self.subclasses.get(sub, []))
        return sorted(out)

    def methods_of(self, classes: Iterable[str], name: str) -> list[str]:
        """What ``x.name()`` may run for ``x`` an instance of one of ``classes``: inherited or overridden."""
        out: set[str] = set()
        for cls in classes:
            found = self.lookup_method(cls, name)
            if found is not None:
                out.add(found)
            out.update(self.overrides(cls, name))
        return sorted(out)

    def _typed_targets(self, module: str, call: Call, parts: list[str]) -> list[str] | None:
        """Methods a call on a typed receiver runs; None when the receiver's class is not known."""
        assert self._receivers is not None
        rest = ".".join(parts[1:-1])
        if call.recv:
            exprs = [f"{alt}.{rest}" if rest else alt for alt in call.recv.split("|")]
        else:
            exprs = [".".join(parts[:-1])]
        held: set[tuple[str, str]] = set()
        for expr in exprs:
            held |= self._receivers.instances(expr, module, call.caller)
        if not held:
            return None
        # An object of another package's class runs none of the target's methods.
        held = {v for v in held if v[0] != "ext"}
        if not held:
            return []
        # An instance built by calling the class itself runs that class's method, never an
        # override of a class derived from it.
        out = set(self.methods_of(sorted(n for k, n in held if k != "new"), parts[-1]))
        for cls in sorted(n for k, n in held if k == "new"):
            found = self.lookup_method(cls, parts[-1])
            if found is not None:
                out.add(found)
        # ``self.updater.update(...)`` where the class stores a method in that attribute
        # (``self.update = self.update_single``, over a placeholder method of that name for the
        # signature): the call runs what is stored.
        for _kind, cls in sorted(held):
            out.update(target for target, _ in self._stored_refs(cls, parts[-1]))
        # No class held there has such a method: the attribute holds a function (a named tuple's
        # field, ``ops.fused(...)``), which only its name ties to a definition.
        return sorted(out) if out else None

    def _targets(self, module: str, f: FileFacts, call: Call) -> tuple[list[str], bool]:
        # What a call runs depends on these fields alone; the index asks it for many lookups.
        key = (module, call.callee, call.caller, call.recv, call.ref)
        found = self._target_memo.get(key)
        if found is None:
            found = self._target_memo[key] = self._resolve_targets(module, f, call)
        return found

    def _resolve_targets(self, module: str, f: FileFacts, call: Call) -> tuple[list[str], bool]:
        parts = call.callee.split(".")
        head = parts[0]
        if len(parts) == 4 and parts[:2] == ["torch", "ops"]:
            return self.ops.get(parts[3], []), True
        if call.ref:
            return self._referenced(module, f, call, parts), True
        if parts[-1] == "apply" and len(parts) >= 2 and head not in ("self", "cls", "super()", "?"):
            cls = self.resolve_dotted(".".join(parts[:-1]), f, call.caller)
            if cls is not None and self._autograd_function(cls):
                found = self.lookup_method(cls, "forward")
                return ([found] if found is not None else []), True
        if len(parts) >= 2 and (call.recv or (head in ("self", "cls") and len(parts) > 2)):
            typed = self._typed_targets(module, call, parts)
            if typed is not None:
                return typed, True
        if head in ("self", "cls") and len(parts) == 2:
            cls = self.owner_class(module, call.caller)
            if cls is not None:
                found = self.lookup_method(cls, parts[1])
                out = [found] if found is not None else []
                if not out and not call.ref:
                    # ``self.get_fn(...)`` where a method stored ``self.get_fn = self._get_v2``.
                    out = sorted({target for target, _ in self._stored_refs(cls, parts[1])})
                return out + self.overrides(cls, parts[1]), True
            return [], True
        if parts == ["cls"]:
            # ``return cls(...)`` in a class method (``Buffers.create(...)``) builds its class; a
            # local named ``cls`` (``cls = table.get(name)``) in any other scope is not it.
            d = self.defs.get(f"{module}:{call.caller}")
            built = (
                self.owner_class(module, call.caller) if d is not None and d.params[:1] == ("cls",) else None
            )
            return ([built] if built is not None and not call.ref else []), True
        if head == "super()" and len(parts) == 2:
            cls = self.owner_class(module, call.caller)
            for base in self.bases.get(cls or "", []):
                found = self.lookup_method(base, parts[1])
                if found is not None:
                    return [found], True
            return [], True
        if head not in ("?", "self", "cls", "super()"):
            found = self.resolve_dotted(call.callee, f, call.caller)
            if found is not None:
                return [found], True
            if len(parts) >= 2 and self._absent(parts, module):
                # ``mod.f()`` through an import of a module of the target's own package that the
                # tree does not hold: another function that happens to share the name is not it.
                return [], False
        name = parts[-1]
        if name.startswith("__") or (len(parts) == 1 and head in f.imports):
            return [], False
        candidates = self.by_name.get(name, [])
        if len(candidates) == 1:
            return candidates, False
        return self._family(name, candidates), False

    def _absent(self, parts: list[str], module: str) -> bool:
        """Whether dotted ``parts`` (imports applied) name, below the target's own top package, a
        module or name no file of the tree defines: the nearest module that exists neither defines
        nor imports the next part (nor star-imports anything)."""
        if parts[0] != module.partition(".")[0]:
            return False
        for cut in range(len(parts) - 1, 0, -1):
            target = self.files.get(".".join(parts[:cut]))
            if target is None:
                continue
            first = parts[cut]
            return not (
                f"{target.module}:{first}" in self.defs
                or first in target.imports
                or any(k.startswith("*") for k in target.imports)
            )
        # No module on the path exists: absent, unless it is a folder of modules (no ``__init__``).
        below = ".".join(parts[:-1]) + "."
        return not any(m.startswith(below) for m in self.files)

    def _autograd_function(self, cls: str) -> bool:
        d = self.defs[cls]
        if d.kind != "c":
            return False
        lineage = [d, *(self.defs[a] for a in self.ancestors(cls))]
        return any(b.endswith("autograd.Function") for c in lineage for b in c.bases)

    def _family(self, name: str, candidates: list[str]) -> list[str]:
        """Every definition of ``name`` when all are one method and its overrides (one root class).

        A call of that name on an unknown receiver runs one of them: the name is the operation.
        """
        found = self._families.get(name)
        if found is not None:
            return found
        owners = []
        for node in candidates:
            d = self.defs[node]
            if not d.owner:
                self._families[name] = []
                return []
            owners.append(f"{node.partition(':')[0]}:{d.owner}")
        out: list[str] = []
        for root in set(owners):
            if all(o == root or root in self.ancestors(o) for o in owners):
                out = sorted(candidates)
                break
        self._families[name] = out
        return out

    def descendants(self, cls: str) -> set[str]:
        """Every class below ``cls`` in the target."""
        out: set[str] = set()
        todo = list(self.subclasses.get(cls, []))
        while todo:
            here = todo.pop()
            if here not in out:
                out.add(here)
                todo.extend(self.subclasses.get(here, []))
        return out

    def ancestors(self, cls: str) -> set[str]:
        """Every class ``cls`` derives from in the target."""
        out: set[str] = set()
        todo = list(self.bases.get(cls, []))
        while todo:
            here = todo.pop()
            if here not in out:
                out.add(here)
                todo.extend(self.bases.get(here, []))
        return out

    def _referenced(self, module: str, f: FileFacts, call: Call, parts: list[str]) -> list[str]:
        if parts[0] in ("self", "cls"):
            cls = self.owner_class(module, call.caller)
            return self.methods_of([cls], parts[1]) if cls is not None else []
        found = self.resolve_dotted(call.callee, f, call.caller)
        return [found] if found is not None and found != f"{module}:{call.caller}" else []

    def _stored_refs(self, cls: str, name: str) -> list[tuple[str, tuple[Atom, ...]]]:
        """What the classes of ``cls``'s lineage store in ``self.name`` (``self.name = self.m``, or
        a function), each with the guards of one assignment."""
        key = (cls, name)
        found = self._stored.get(key)
        if found is not None:
            return found
        lineage = {cls} | self.ancestors(cls) | self.descendants(cls)
        shorts = {
            alt.rpartition(".")[2]
            for here in sorted(lineage)
            for alt in self.attrs.get(here, {}).get(name, "").split("|")
            if alt and all(p.isidentifier() for p in alt.split("."))
        }
        out: list[tuple[str, tuple[Atom, ...]]] = []
        for short in sorted(shorts):
            for f, calls in self._calls_by_name.get(short, ()):
                for raw in calls:
                    ref = Call._make(raw)
                    if not (
                        ref.ref and ref.stored == name and self.owner_class(f.module, ref.caller) in lineage
                    ):
                        continue
                    guards = tuple(f.atoms[i] for i in ref.guards)
                    targets = self._referenced(f.module, f, ref, ref.callee.split("."))
                    out.extend((target, guards) for target in targets)
        self._stored[key] = out
        return out

    def _stored_called(self, module: str, call: Call) -> bool:
        """Whether the attribute reference ``call`` is stored in is called (``self.x(...)``) by its
        class's lineage: then those calls, not the assignment, are its ways in."""
        cls = self.owner_class(module, call.caller)
        if cls is None:
            return False
        lineage = {cls} | self.ancestors(cls) | self.descendants(cls)
        for f, calls in self._calls_by_name.get(call.stored, ()):
            for raw in calls:
                use = Call._make(raw)
                if use.ref:
                    continue
                if use.callee == f"self.{call.stored}" and self.owner_class(f.module, use.caller) in lineage:
                    return True
                parts = use.callee.split(".")
                # Called from outside on a receiver known to be of the lineage (``self.updater.update()``).
                if len(parts) >= 2 and (use.recv or (parts[0] in ("self", "cls") and len(parts) > 2)):
                    typed = self._typed_targets(f.module, use, parts)
                    if typed and any(self._owner_of(t) in lineage for t in typed):
                        return True
        return False

    def _owner_of(self, node: str) -> str | None:
        module, _, qual = node.partition(":")
        return self.owner_class(module, qual)

    def _add_call(self, module: str, f: FileFacts, call: Call) -> None:
        targets, confident = self._targets(module, f, call)
        if not targets:
            return
        if call.ref and call.stored and self._stored_called(module, call):
            # Its ways in are the calls of the attribute (under this assignment's guards), when
            # those calls are tied to it.
            cls = self.owner_class(module, call.caller)
            tied = {t for t, _ in self._stored_refs(cls, call.stored)} if cls is not None else set()
            if set(targets) <= tied:
                return
        guards = tuple(f.atoms[i] for i in call.guards)
        parts = call.callee.split(".")
        if not call.ref and parts[0] == "self" and len(parts) == 2:
            cls = self.owner_class(module, call.caller)
            stored = self._stored_refs(cls, parts[1]) if cls is not None else []
            if stored and self.lookup_method(cls or "", parts[1]) is None:
                # Each call of the attribute runs what an assignment stored there, under both guards.
                catches = None if call.catches is None else tuple(call.catches)
                for target, given in stored:
                    self._callers.setdefault(target, []).append(
                        Edge(f"{module}:{call.caller}", f.path, (*guards, *given), catches, True, False)
                    )
                return
        catches = None if call.catches is None or call.ref else tuple(call.catches)
        caller = f"{module}:{call.caller}"
        parts = call.callee.split(".")
        cls = None
        if parts[0] in ("self", "cls") and len(parts) == 2 and not call.ref:
            cls = self.owner_class(module, call.caller)
        inherited = self.lookup_method(cls, parts[1]) if cls is not None else None
        on_class = (
            not call.ref
            and not call.recv
            and len(parts) >= 2
            and (parts[0] == "cls" if len(parts) == 2 else parts[-2][:1].isupper())
        )
        if parts == ["cls"]:
            self._built_by_cls.update((caller, target) for target in targets)
        for target in targets:
            down = cls is not None and target != inherited
            passed, forwards, words = self._passes(f, target, call, parts)
            self._callers.setdefault(target, []).append(
                Edge(caller, f.path, guards, catches, confident, down, on_class, passed, forwards, words)
            )

    def _params(self, target: str, call: Call, parts: list[str]) -> tuple[str, ...] | None:
        """The positional parameters of ``target`` that ``call``'s arguments fill, in order; None
        when the call's slots cannot be matched to them (an unpacked argument, an unknown
        signature)."""
        d = self.defs.get(target)
        built = d is not None and d.kind == "c"
        if built:
            # Building a class calls its own ``__init__``, which binds ``self`` (an inherited one
            # is not known here).
            init = self.methods.get(target, {}).get("__init__")
            d = self.defs.get(init) if init is not None and init.startswith(target + ".") else None
        slots = call.given.split(",")
        if d is None or d.kind != "f" or call.ref or "*" in slots or "**" in slots:
            return None
        # A call through an instance or a class binds the first parameter itself, except an
        # instance method called on its class by name (``Foo.m(obj, x)``).
        bound = d.params[:1] in (("self",), ("cls",)) and (
            built or (len(parts) >= 2 and not (d.params[0] == "self" and parts[-2][:1].isupper()))
        )
        return d.params[1:] if bound else d.params

    def _passes(
        self, f: FileFacts, target: str, call: Call, parts: list[str]
    ) -> tuple[frozenset[str] | None, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """:attr:`Edge.given`, :attr:`Edge.forwards` and :attr:`Edge.words` of ``call`` (made in
        file ``f``) to ``target``."""
        params = self._params(target, call, parts)
        if params is None:
            return None, (), ()

        def param(slot: str) -> str:
            if slot.startswith("="):
                return slot[1:]
            return params[int(slot)] if slot.isdigit() and int(slot) < len(params) else ""

        out = set()
        for slot in (s for s in call.given.split(",") if s):
            falsy, slot = slot.startswith("!"), slot.removeprefix("!")
            name = param(slot)
            if name:
                out.add(name)
                if falsy:
                    out.add(f"!{name}")
        forwards = tuple(
            sorted({(p, value) for slot, kind, value in call.args if kind == "n" and (p := param(slot))})
        )
        locals_ = self._literal_locals(f).get(call.caller, {})
        words: set[tuple[str, str]] = set()
        for slot, kind, value in call.args:
            p = param(slot)
            if p and kind == LITERAL:
                words.add((p, value))
            elif p and kind == "n" and value in locals_:
                words.update((p, w) for w in locals_[value])
        return frozenset(out), forwards, tuple(sorted(words))

    def _literal_locals(self, f: FileFacts) -> dict[str, dict[str, tuple[str, ...]]]:
        """caller -> local -> the words it is only ever given (see
        :func:`extractor.reach.arguments.literal_locals`), for file ``f``."""
        found = self._locals.get(f.module)
        if found is None:
            found = {}
            for qual, token, kind, value in f.binds:
                if kind == LITERAL and token.startswith("n:"):
                    by_name = found.setdefault(qual, {})
                    by_name[token[2:]] = (*by_name.get(token[2:], ()), value)
            self._locals[f.module] = found
        return found


def is_test_path(path: str) -> bool:
    """Whether a file is a test (``tests/``, ``test_x.py``, ``x_test.py``): its calls reach no user."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("test", "tests") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name in ("conftest.py", "tests.py")
    )
