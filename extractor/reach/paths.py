"""Reach per site: the selectors on the caller chains from a definition up to an entry point.

A reach is a small set of *alternatives* (one per way in), each a conjunction of selectors met
along one chain. A chain without any selector means anyone can get there: the whole reach is then
empty (nothing narrows it). Chains stop after :data:`MAX_DEPTH` callers and keep the selectors met
below (anything may call beyond); a function nobody calls is an entry point, while a class nothing
builds, registers or derives from (and so its methods) is no known way in and adds no alternative.
Methods are reached like their class: through its constructions, registrations and
``EntryClass``, or through any subclass (whose instance runs the inherited method); a method's
class is not counted as a further caller. Calls with a known receiver are preferred; calls tied by
name alone are used only where those lead nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from extractor.prose.flag_spelling import declared_flag
from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.reach.arguments import PassedFlags
from extractor.reach.facts import Atom, FileFacts
from extractor.reach.file_index import module_name
from extractor.reach.guard_atoms import ACCESSOR, NOT_VALUE, VALUE_TEST, class_flag_name
from extractor.reach.selectors import (
    Selector,
    arch_names,
    atom_selector,
    class_value_selector,
    config_selectors,
    dead_entry,
    disjoint_archs,
    enum_flags,
    folder_platform,
    registry_selector,
)
from extractor.reach.target_index import RUN_BY_FRAMEWORK, Edge, TargetIndex

__all__ = ["MAX_DEPTH", "Reach", "ReachFinder"]

# A kernel sits several helpers below the backend or model that picks it (kernel <- launcher <-
# dispatcher <- backend method <- backend <- factory): the choice is often further up than six.
MAX_DEPTH = 8
_MAX_ALTERNATIVES = 3
_MAX_VALUES = 6
# A component shared by a few model families still narrows the path: up to this many are named.
# A family's base model class is built by its variants, draft models and multimodal wrappers
# (well over a dozen architectures), while the target serves a couple of hundred.
_MAX_ARCHS = 32
# A predicate may test another (``is_x_enabled() and is_y()``): followed this many calls deep.
_MAX_TEST_DEPTH = 3

Conj = frozenset[Selector]
Reach = tuple[Conj, ...]
"""Alternatives; ``()`` when nothing narrows the path."""

_FREE: Reach = (frozenset(),)
_STAND_INS = frozenset({"fake", "dummy", "mock", "stub", "auto", "default"})
"""Declared choices that are no backend to switch to: stand-ins for tests, and the values that let
the launch code pick one (it may pick the very backend the user is leaving)."""
_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})


@dataclass
class ReachFinder:
    """Reach of definitions in one target, memoised; also the choices each registry-backed flag has."""

    index: TargetIndex
    knowledge: Knowledge
    passed: PassedFlags | None = None
    """Flags that reach a caller's parameters and ``self`` attributes: a guard on one is a flag's."""
    _memo: dict[str, Reach | None] = field(default_factory=dict)
    _busy: set[str] = field(default_factory=set)
    _partial: dict[str, tuple[int, Reach, frozenset[str]]] = field(default_factory=dict)
    """Incomplete results, the depth they were computed at and the callers on the stack whose
    cycles cut them: reused only at that depth or deeper, while those callers are on the stack."""
    _cut: bool = False
    _only: tuple[str, list[Edge]] | None = None
    """While one site's reach is asked: its function, and the calls of it that count."""
    _hits: set[str] = field(default_factory=set)
    _own: dict[str, frozenset[Selector]] = field(default_factory=dict)
    _tests_memo: dict[str, frozenset[Selector]] = field(default_factory=dict)
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """flag -> every key registered for it, in registration order (what a workaround may name)."""
    scoped_choices: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    """namespace -> flag -> the values the registries of that package are keyed by."""

    def __post_init__(self) -> None:
        registered: dict[str, set[Selector]] = {}
        on: dict[tuple[str, Selector], set[str]] = {}
        # In the order the target registers them (files by path): the first is usually the main one.
        keys: dict[str, dict[str, None]] = {}
        scoped_keys: dict[str, dict[str, dict[str, None]]] = {}
        archs = {n for m, f in self.index.files.items() for n in f.entry if f"{m}:{n}" in self.index.defs}
        for module, f in sorted(self.index.files.items()):
            flags = self.knowledge.flags_for(f.path)
            by_registry: dict[str, set[str]] = {}
            for reg in f.registrations:
                # Several keys of one registration form one composite key (``register(a2a, runner)``):
                # only single keys say which flag's choices a registry holds.
                by_registry.setdefault(reg.registry, set()).update(reg.keys if len(reg.keys) == 1 else ())
            for reg in f.registrations:
                sel = registry_selector(reg.registry, set(reg.keys), by_registry[reg.registry], flags, archs)
                if sel is None:
                    continue
                node = self.index.resolve_dotted(reg.target, f, "<module>")
                if node is None:
                    continue
                if sel[0] == "flag":
                    keys.setdefault(sel[1], {}).update(dict.fromkeys(reg.keys))
                    # Each package keeps its own registries: a diffusion backend is no choice of
                    # the server's flag of the same name, nor the other way round.
                    ns = self.knowledge.namespace_of(f.path)
                    scoped_keys.setdefault(ns, {}).setdefault(sel[1], {}).update(dict.fromkeys(reg.keys))
                registered.setdefault(node, set()).add(sel)
                on.setdefault((node, sel), set()).add(reg.platform)
            for name in f.entry:
                node = f"{module}:{name}"
                if node in self.index.defs:
                    registered.setdefault(node, set()).add(("arch", name, ()))
            for node, sel in config_selectors(self.index, f):
                registered.setdefault(node, set()).add(sel)
        self._registered = {k: frozenset(v) for k, v in registered.items()}
        # A registration made on one platform alone (``if is_npu(): TABLE.update(...)``) is a way in
        # on that platform only; made also without a gate, or on two, it is one everywhere.
        self._registered_on = {
            key: next(iter(platforms))
            for key, platforms in on.items()
            if len(platforms) == 1 and "" not in platforms
        }
        self._arch_names = frozenset(archs)
        self._all_choices: dict[str, tuple[str, ...]] = {}
        for info in self.knowledge.flag_info.values():
            if info.choices:
                self._all_choices.setdefault(info.flag, info.choices)
        # A backend flag no registry is keyed by still offers its declared default, when that is
        # a backend of its own (``--linear-attn-backend triton``), in each package that declares
        # it: the backend sglang runs unless told otherwise does the same work. Any other declared
        # value may need hardware the user lacks, and ``auto`` may pick the very backend the user
        # is leaving; a mode or a role (``--disaggregation-mode decode``) is no such swap.
        for ns, declared in sorted(self.knowledge.scoped.items()):
            for info in declared.values():
                if (
                    info.default in info.choices
                    and info.default.lower() not in _STAND_INS
                    and not info.is_list
                    and info.dest.endswith("_backend")
                    and info.flag not in keys
                ):
                    scoped_keys.setdefault(ns, {}).setdefault(info.flag, {info.default: None})
        for by_flag in scoped_keys.values():
            for flag, values in by_flag.items():
                keys.setdefault(flag, dict(values))
        mentions = self.knowledge.mentions
        self.choices = {
            flag: _broadest_first(tuple(v), mentions.get(flag, {})) for flag, v in sorted(keys.items())
        }
        self.scoped_choices = {
            ns: {
                flag: _broadest_first(tuple(v), mentions.get(flag, {})) for flag, v in sorted(by_flag.items())
            }
            for ns, by_flag in sorted(scoped_keys.items())
        }
        self._enums = enum_flags(self.index, self.knowledge)
        self._flag_views: dict[str, Mapping[str, FlagInfo]] = {}
        self._value_tests = _value_tests(self.index)
        self._tested_values: dict[str, dict[str, tuple[str, ...]]] = {}
        self._attr_tests: dict[tuple[str, str], frozenset[Selector]] = {}
        self._stored_rows: dict[str, list[tuple[FileFacts, tuple[str, ...]]]] | None = None

    # ----------------------------------------------------------------- selectors of one node

    def _flags(self, path: str) -> Mapping[str, FlagInfo]:
        namespace = self.knowledge.namespace_of(path)
        view = self._flag_views.get(namespace)
        if view is None:
            flags = self.knowledge.flags_for(path)
            # An enum built from a flag's value (``TransferBackend(args.x_transfer_backend)``) is
            # tested under the enum's name (``backend == TransferBackend.NIXL``): that name reads
            # the flag too, where the flags of this path hold it.
            extra = {e: flags[d] for e, d in self._enums.items() if e not in flags and d in flags}
            view = self._flag_views[namespace] = {**flags, **extra} if extra else flags
        return view

    def guard_selectors(
        self, guards: Iterable[tuple[str, ...]], path: str, scope: str | None = None
    ) -> frozenset[Selector]:
        """The user choices among ``guards`` (read in ``path``; in definition ``scope``, when given,
        a test of a parameter or ``self`` attribute its callers fill from one flag counts too)."""
        flags = self._flags(path)
        out: set[Selector] = set()
        failed: set[Selector] = set()
        for atom in guards:
            negated = atom[0] == NOT_VALUE
            if negated:
                atom = ("i", *atom[1:])
            if atom[0] == "t":
                out |= self._tested(atom[1], path, scope or "<module>", 0)
                continue
            if atom[0] == "a" and atom[2] == "self" and atom[1] not in flags and scope is not None:
                # ``self.use_x = _is_x_enabled()`` then ``if self.use_x:``: the predicate's test.
                called = self._attr_call(scope, atom[1])
                if called is not None:
                    out |= self._tested(called, path, scope, 0)
                    continue
                # ``self.use_x = get_x_backend().is_y()`` then ``if self.use_x:``: that value test.
                held = self._attr_value_test(scope, atom[1], flags)
                if held is None:
                    # ``self.enable_cg = _is_cuda and envs.SGLANG_X.get()``: what that test needs.
                    stored = self._attr_test(scope, atom[1])
                    if stored:
                        out |= stored
                        continue
                atom = held or atom
            if atom[0] == "i" and atom[2] == "self" and atom[1] not in flags and scope is not None:
                # ``self._backend.is_x()`` where the class stores a value of the flag's enum there.
                dest = self._attr_flag(scope, atom[1], flags)
                if dest is not None:
                    atom = ("i", dest, "enum", *atom[3:])
            if atom[0] == "i":
                # ``algo.is_dflash()`` on a class named after the flag: the members it returns for
                # (for ``is_a() or is_b()``, those of either).
                found = [self._value_tests.get((atom[1], x)) for x in atom[3:]]
                if found and all(m is not None for m in found):
                    atom = ("v", atom[1], "enum", *dict.fromkeys(v for m in found if m for v in m))
            sel = atom_selector(atom, flags, self.knowledge)
            if sel is None and scope is not None:
                sel = self._passed_selector(atom, flags, scope)
            if sel is not None:
                (failed if negated else out).add(sel)
        return frozenset(_less_failed(out, failed)) if failed else frozenset(out)

    def _stored(self, scope: str, attr: str) -> str:
        """The type expression of what the methods of the class of definition ``scope`` store in
        ``self.attr`` (``""``: unknown)."""
        module, _, qual = scope.rpartition(":")
        cls = self.index.owner_class(module, qual) if module else None
        return self.index.attrs.get(cls, {}).get(attr, "") if cls is not None else ""

    def _attr_call(self, scope: str, attr: str) -> str | None:
        """The function whose value is all the class of definition ``scope`` stores in ``attr``."""
        stored = self._stored(scope, attr)
        if "|" in stored or not stored.endswith("()") or stored.count("(") != 1:
            return None
        return stored[:-2]

    def tested_values(self, path: str) -> dict[str, tuple[str, ...]]:
        """Backend flag -> the values of it that the code of ``path`` tests for, in its tests and in
        the value tests its classes keep (``self.use_marlin = get_moe_runner_backend().is_marlin()``):
        the choices that code was written for, each one a value the flag declares."""
        module = module_name(path)
        found = self._tested_values.get(module)
        if found is not None:
            return found
        f = self.index.files.get(module)
        atoms: list[Atom] = [a for a in (f.atoms if f is not None else []) if a[0] in ("v", "i")]
        flags = self._flags(path)
        for d in f.defs if f is not None else []:
            for _attr, stored in d.attrs:
                kept = _value_test_atom(stored, flags)
                if kept is not None:
                    atoms.append(kept)
        by_flag: dict[str, set[str]] = {}
        for sel in self.guard_selectors(atoms, path):
            if sel[0] == "flag" and sel[2]:
                by_flag.setdefault(sel[1], set()).update(sel[2])
        out = {}
        for name, values in sorted(by_flag.items()):
            info = declared_flag(name, flags)
            # A backend is one implementation among others; another mode, role or format is
            # another job (a decode server is no prefill server), not a way around this code.
            if info is not None and info.dest.endswith("_backend"):
                out[name] = tuple(c for c in info.choices if c in values and c.lower() not in _STAND_INS)
        self._tested_values[module] = {k: v for k, v in out.items() if v}
        return self._tested_values[module]

    def _attr_test(self, scope: str, attr: str) -> frozenset[Selector]:
        """What holds wherever ``self.attr`` is true in the class of definition ``scope``: the
        selectors every test its methods store there needs (see :attr:`FileFacts.tests`). Nothing
        when some method stores another (non-false) value there."""
        module, _, qual = scope.rpartition(":")
        cls = self.index.owner_class(module, qual) if module else None
        if cls is None:
            return frozenset()
        key = (cls, attr)
        found = self._attr_tests.get(key)
        if found is not None:
            return found
        self._attr_tests[key] = frozenset()  # a test that reads the attribute itself says nothing
        # A subclass may store something else there for the same method to read.
        lineage = {cls} | self.index.ancestors(cls) | self.index.descendants(cls)
        held: list[frozenset[Selector]] = []
        rows = self._stored_tests().get(attr, ())
        for f, row in rows:
            if row[0] in ("x", "X") or self.index.owner_class(f.module, row[1]) not in lineage:
                continue
            if row[0] == "S":
                return frozenset()
            if row[0] == "s":
                atoms = [f.atoms[int(i)] for i in row[3:]]
                held.append(self.guard_selectors(atoms, f.path, f"{f.module}:{row[1]}"))
        if not held:
            # Set from outside only (``self.shared_experts.use_x = True`` in the owning layer, under
            # its tests): what every such store needs, unless some store puts another value there.
            for f, row in rows:
                if row[0] == "X":
                    return frozenset()
                if row[0] == "x":
                    atoms = [f.atoms[int(i)] for i in row[3:]]
                    held.append(self.guard_selectors(atoms, f.path, f"{f.module}:{row[1]}"))
        out = frozenset.intersection(*held) if held else frozenset()
        self._attr_tests[key] = out
        return out

    def _stored_tests(self) -> dict[str, list[tuple[FileFacts, tuple[str, ...]]]]:
        if self._stored_rows is None:
            table: dict[str, list[tuple[FileFacts, tuple[str, ...]]]] = {}
            for _, f in sorted(self.index.files.items()):
                for row in f.tests:
                    if row[0] in ("s", "S", "F", "x", "X"):
                        table.setdefault(row[2], []).append((f, tuple(row)))
            self._stored_rows = table
        return self._stored_rows

    def _attr_value_test(self, scope: str, attr: str, flags: Mapping[str, FlagInfo]) -> Atom | None:
        """The value test of a flag's accessor that is all the class of definition ``scope`` stores
        in ``attr`` (``get_moe_runner_backend().is_marlin()``), as a guard atom."""
        return _value_test_atom(self._stored(scope, attr), flags)

    def _attr_flag(self, scope: str, attr: str, flags: Mapping[str, FlagInfo]) -> str | None:
        """The flag whose value attribute ``attr`` of the class of definition ``scope`` holds, read
        from what its methods store there (``MoeRunnerBackend.TRITON``, ``get_moe_runner_backend()``)."""
        dests = set()
        for alt in self._stored(scope, attr).split("|"):
            for part in alt.split("."):
                if part.endswith("()") and (m := ACCESSOR.match(part[:-2])):
                    dest: str | None = m.group(1)
                else:
                    dest = class_flag_name(part)
                if dest is not None and dest in flags:
                    dests.add(dest)
        return dests.pop() if len(dests) == 1 else None

    def _tested(self, callee: str, path: str, scope: str, depth: int) -> frozenset[Selector]:
        """What a call's value being true says: the atoms of a predicate the callee only returns, or
        the architectures of the configs it returns only for (``isinstance(config, XConfig)``)."""
        f = self.index.files.get(module_name(path))
        # ``scope`` is the calling definition as a node (``module:qual``), or ``<module>``.
        module, _, qual = scope.rpartition(":")
        if callee.startswith("self."):
            cls = self.index.owner_class(module, qual) if module else None
            node = self.index.lookup_method(cls, callee[5:]) if cls is not None else None
        elif f is not None:
            # A test read before the function's own import of the name was met keeps the bare name.
            head, dot, rest = callee.partition(".")
            imported = f.imports.get(head)
            node = self.index.resolve_dotted(callee, f, qual)
            if node is None and imported is not None:
                node = self.index.resolve_dotted(f"{imported}{dot}{rest}", f, qual)
        else:
            node = None
        if node is None or depth > _MAX_TEST_DEPTH:
            return frozenset()
        found = self._tests_memo.get(node)
        if found is not None:
            return found
        self._tests_memo[node] = frozenset()  # a predicate that calls itself says nothing more
        module, _, qual = node.partition(":")
        g = self.index.files[module]
        out: set[Selector] = set()
        for test in g.tests:
            if test[1] != qual:
                continue
            if test[0] == "p":
                atoms = [g.atoms[int(i)] for i in test[2:]]
                for atom in atoms:
                    if atom[0] == "t":
                        out |= self._tested(atom[1], g.path, node, depth + 1)
                out |= self.guard_selectors([a for a in atoms if a[0] != "t"], g.path)
            elif test[0] == "c":
                sel = self._config_archs(test[2:], g)
                if sel is not None:
                    out.add(sel)
            elif test[0] == "a":
                # Only names some model file serves: a renamed or draft head is no checkpoint's.
                names = sorted({n for n in test[2:] if n in self._arch_names})
                if names:
                    out.add(("arch", names[0], ()) if len(names) == 1 else ("arch", "", tuple(names)))
                    # Of those, only the checkpoints whose config sets each key the test asks for.
                    out.update(("config", k[1:], ()) for k in test[2:] if k.startswith("."))
        self._tests_memo[node] = frozenset(out)
        return self._tests_memo[node]

    def _config_archs(self, classes: tuple[str, ...], f: FileFacts) -> Selector | None:
        """The architectures served with one of ``classes`` (or a class derived from one) as their
        config: each must be a config some model file imports, or nothing is sure."""
        names: set[str] = set()
        for dotted in classes:
            node = self.index.resolve_dotted(dotted, f, "<module>")
            if node is None:
                return None
            for cls in sorted({node} | self.index.descendants(node)):
                archs = [s for s in self._registered.get(cls, ()) if s[0] == "arch"]
                if not archs:
                    return None
                for _kind, name, values in archs:
                    names.update(values or (name,))
        if not names or len(names) > _MAX_ARCHS:
            return None
        ordered = tuple(sorted(names))
        return ("arch", ordered[0], ()) if len(ordered) == 1 else ("arch", "", ordered)

    def passed_selector(self, atom: tuple[str, ...], path: str, scope: str) -> Selector | None:
        """:meth:`_passed_selector` with the flags of ``path``."""
        return self._passed_selector(atom, self._flags(path), scope)

    def _passed_selector(
        self, atom: tuple[str, ...], flags: Mapping[str, FlagInfo], scope: str
    ) -> Selector | None:
        if self.passed is None or atom[0] not in ("a", "v", "i") or atom[2] not in ("name", "self"):
            return None
        module, _, qual = scope.partition(":")
        token = f"{'n' if atom[2] == 'name' else 's'}:{atom[1]}"
        found = self.passed.of(module, qual, token)
        if not found and atom[0] in ("a", "v"):
            # ``backend == "torch"`` on a value the callers read from one environment variable.
            envs = self.passed.env_infos_of(module, qual, token)
            wanted = atom[3:] if atom[0] == "v" else ()
            if len(envs) == 1 and envs[0].default.strip().strip("'\"") in wanted:
                # ``os.environ.get("X", "all") == "all"``: an unset variable reads as the tested
                # value, so the path is taken without the user setting anything.
                return None
            if len(envs) == 1:
                return atom_selector(("e", envs[0].flag, *wanted), flags, self.knowledge)
        if len(found) != 1 or flags.get(found[0].dest) is not found[0]:
            return None  # several flags (or one of another namespace) say nothing sure
        return atom_selector((atom[0], found[0].dest, "args", *atom[3:]), flags, self.knowledge)

    def class_guards(self, guards: Iterable[tuple[str, ...]]) -> frozenset[Selector]:
        """The architectures a test of which class a value is (``isinstance(x, C)``, a name
        compare) selects, when every way to build those classes is for some architectures."""
        return self._class_guards(guards, 0)

    def _class_guards(self, guards: Iterable[tuple[str, ...]], depth: int) -> frozenset[Selector]:
        out = set()
        for atom in guards:
            sel = class_value_selector(atom, self._classes_named, lambda n: self.reach(n, depth + 1))
            if sel is not None:
                out.add(sel)
        return frozenset(out)

    def _classes_named(self, name: str) -> list[str]:
        return [n for n in self.index.by_name.get(name, []) if self.index.defs[n].kind == "c"]

    def own(self, node: str) -> frozenset[Selector]:
        """Selectors that hold wherever ``node`` runs: the gates it is defined under, its folder."""
        found = self._own.get(node)
        if found is not None:
            return found
        d = self.index.defs.get(node)
        module = node.partition(":")[0]
        f = self.index.files.get(module)
        out: set[Selector] = set()
        if f is not None:
            if d is not None:
                out |= self.guard_selectors((f.atoms[i] for i in d.guards), f.path)
            platform = folder_platform(f.path)
            if platform is not None:
                out.add(("platform", platform, ()))
        self._own[node] = frozenset(out)
        return self._own[node]

    # ----------------------------------------------------------------- reach

    def of_site(
        self, path: str, module: str, qualname: str, ends: Callable[[Edge], bool] | None = None
    ) -> Reach:
        """Reach of a site in ``qualname`` of ``module`` (``<module>`` for top-level code). The
        calls of the site's function that ``ends`` says catch its raise are no way to its error,
        when some other call is."""
        node = f"{module}:{qualname}"
        if node not in self.index.defs:
            node = f"{module}:<module>"
        counted = None
        if ends is not None and node in self.index.defs:
            edges = self._callers(node)
            counted = [e for e in edges if not ends(e)]
            if not counted or len(counted) == len(edges):
                counted = None
        if counted is not None:
            self._only = (node, counted)
            try:
                found = self.reach(node, 0)
            finally:
                self._only = None
        else:
            found = self.reach(node, 0)
        if found is None:
            # No known way in: what holds wherever the code runs (its folder's platform, the gates
            # it is defined under) still narrows it.
            own = frozenset(s for s in self.own(node) if not self._every_value(s))
            return (own,) if own else ()
        if found == _FREE:
            return ()
        out = []
        for conj in found:
            kept = frozenset(s for s in conj if not self._every_value(s))
            if not kept:
                return ()  # one way in that any setting takes: nothing narrows the path
            out.append(kept)
        return tuple(out)

    def _every_value(self, sel: Selector) -> bool:
        """A flag selector naming every value the flag takes narrows nothing."""
        if sel[0] != "flag" or not sel[2]:
            return False
        choices = self._all_choices.get(sel[1], ())
        return bool(choices) and set(choices) <= set(sel[2])

    def reach(self, node: str, depth: int) -> Reach | None:
        """Alternatives of ``node``; None while it is being computed (a cycle) or too deep."""
        # Results that met a cycle or the depth bound are incomplete; they are reused where the
        # budget is no larger (the cost would grow without bound otherwise), so sites must be
        # asked in a fixed order for the output to be fixed.
        narrowed = self._only is not None and self._only[0] == node
        if node in self._memo and not narrowed:
            return self._memo[node]
        partial = None if narrowed else self._partial.get(node)
        # A result that met a cycle left out the ways in through the callers then on the stack:
        # it holds only while they are (elsewhere those ways in count, and it would say too much).
        if partial is not None and partial[0] <= depth and partial[2] <= self._busy:
            self._cut = True
            self._hits |= partial[2]
            return partial[1]
        if node in self._busy:
            self._cut = True
            self._hits.add(node)
            return None  # a cycle: no way in that the chain has not already met
        if depth > MAX_DEPTH:
            # Beyond the bound anything may call it: the chain keeps only the selectors met below.
            self._cut = True
            return _FREE
        outer_cut, self._cut = self._cut, False
        outer_hits, self._hits = self._hits, set()
        self._busy.add(node)
        try:
            alts = self._alternatives(node, depth)
        finally:
            self._busy.discard(node)
        self._hits.discard(node)  # a cycle back to this node is complete here
        hits = frozenset(self._hits)
        self._hits = outer_hits | self._hits
        # A registered definition is also reached through its registry (its key picks it).
        registered = self._registered.get(node)
        # Each registration is a way in of its own (two dicts, or a dict and an EntryClass),
        # unless every call that builds it already needs its key (``elif name == "x":
        # cls.build()`` in the factory that reads the registry): the registry is read on those
        # chains, and its key alone is no further way in.
        keyed = bool(alts) and all(
            any(_implies(s, r) for s in c for r in registered or ()) for c in alts or ()
        )
        if registered and not keyed:
            alts = [*(alts or []), *(self._way(node, r) for r in sorted(registered))]
        elif alts is None:
            d = self.index.defs.get(node)
            if d is not None and (d.kind == "c" or d.owner or node in self.index.op_names):
                # A class nothing builds, registers or derives from (nor any method of it), or a
                # custom op nothing calls, is no way in that we know: dead or built by name. It
                # must not make others' reach empty.
                if not self._cut:
                    self._memo[node] = None
                self._cut = self._cut or outer_cut
                return None
            alts = list(_FREE)  # nobody calls it: an entry point
        own = self.own(node)
        result = _simplify([c | own for c in alts])
        if narrowed:
            pass  # one site's view of its callers: kept by no one else
        elif self._cut:
            self._partial[node] = (depth, result, hits)
        else:
            self._memo[node] = result
        self._cut = self._cut or outer_cut
        return result

    def _via_edges(
        self, edges: list[Edge], depth: int, target: str = "", node: str = ""
    ) -> list[Conj] | None:
        sure = [e for e in edges if e.confident]
        if sure and node and len(sure) < len(edges) and self._sole_definition(node):
            # Tied by name, but no other definition in the target has that name: such a call runs
            # it unless its receiver is another library's object, so it leads in as surely.
            sure = edges
        found = self._via(sure, depth, target) if sure else None
        if found is None and len(sure) < len(edges):
            # Calls tied by name alone count only where no call with a known receiver leads in.
            found = self._via([e for e in edges if not e.confident], depth, target)
        return found

    def _sole_definition(self, node: str) -> bool:
        """Whether ``node`` is a method that is the one definition of its name in the target, and
        the name is no common one another library's objects answer too (``get``, ``append``: a
        bare word). A call ``item.set_pad_value()`` on a receiver of unknown class then runs it.
        (A plain function called by name and not resolved was imported where the index cannot
        see: another library's function of the same name, as likely as not.)"""
        d = self.index.defs.get(node)
        if d is None or not d.owner or d.kind != "f":
            return False
        name = d.qualname.rpartition(".")[2]
        return "_" in name.strip("_") and len(self.index.by_name.get(name, ())) == 1

    def _via(self, use: list[Edge], depth: int, target: str = "") -> list[Conj] | None:
        # A call stored under a key its table's flag never holds is run by nothing.
        use = [e for e in use if not self._dead(e)]
        alts: list[Conj] = []
        reached = False
        for edge in use:
            if edge.down:
                if target and self._overridden_for(edge.caller, target):
                    continue
                # The class of an override already narrows it; the base's caller adds what leads
                # to that caller (``if _is_musa: return self.forward_musa``), not its class's ways.
                up: Reach | list[Conj] | None = self._calls_of(edge.caller, depth + 1, target)
            else:
                up = self.reach(edge.caller, depth + 1)
            if up is None and any(g[0] == "k" for g in edge.guards):
                up = self._class_uses(edge.caller, depth)
            if up is None:
                continue
            by_class = self._class_guards(edge.guards, depth)
            here = self.guard_selectors(edge.guards, edge.path, edge.caller) | by_class
            for c in up:
                if by_class and disjoint_archs(c | by_class) and not disjoint_archs(c):
                    continue  # a dispatch on the model's classes that this chain's models never take
                reached = True
                alts.append(c | here)
            if any(not c for c in alts):
                return list(_FREE)
        return _possible(alts) if reached else None

    def _dead(self, edge: Edge) -> bool:
        flags = self._flags(edge.path)
        return any(dead_entry(atom, flags, self.knowledge.picked) for atom in edge.guards)

    def _platform_gates(self, node: str, depth: int) -> list[frozenset[Selector]]:
        """The platforms each live call of method ``node`` is made on (empty: any), a base's call
        through ``self`` counting its own calls' platforms; calls that never run on ``node``'s
        instances are left out."""
        out: list[frozenset[Selector]] = []
        for e in self.index.callers(node):
            gate = {s for s in self.guard_selectors(e.guards, e.path, e.caller) if s[0] == "platform"}
            if e.down:
                if self._overridden_for(e.caller, node):
                    continue
                up = self._calls_of(e.caller, depth + 1, node)
                if up is None:
                    continue
                gate |= frozenset.intersection(*(frozenset(s for s in c if s[0] == "platform") for c in up))
            out.append(frozenset(gate))
        return sorted(set(out), key=sorted)

    def _overridden_for(self, caller: str, target: str) -> bool:
        """Whether base method ``caller``, which calls the override ``target`` through ``self``,
        never runs on an instance of ``target``'s class: that class (or one between) overrides
        ``caller`` too, and the override does not call it back through ``super()``."""
        module, _, qual = target.partition(":")
        cls = self.index.owner_class(module, qual)
        name = caller.rpartition(".")[2]
        found = self.index.lookup_method(cls, name) if cls is not None else None
        if found is None or found == caller:
            return False
        return not any(e.caller == found for e in self.index.callers(caller))

    def _calls_of(self, node: str, depth: int, target: str = "") -> list[Conj] | None:
        """What leads into base method ``node`` when it runs on an instance of ``target``'s class:
        the guards of its calls (``if _is_musa: return self.forward_musa``), one level up, since
        the callers' own ways in hold for other classes' instances too. Free for a constructor
        (building the class runs it) and when no call is seen (Python, torch or an unknown receiver
        may run it); none when every call of its name runs another definition."""
        name = node.rpartition(".")[2]
        if name in _CONSTRUCTORS:
            return list(_FREE)
        edges = self.index.callers(node)
        if target:
            # A method of a sibling class (its ``super().m()``, its ``self.m()``) runs on that
            # sibling's instances, not on these.
            module, _, qual = target.partition(":")
            cls = self.index.owner_class(module, qual)
            mine = ({cls} | self.index.ancestors(cls)) if cls is not None else set()
            d = self.index.defs.get(node)
            family = self.index.descendants(f"{node.partition(':')[0]}:{d.owner}") if d is not None else set()
            edges = [e for e in edges if self._caller_class(e) not in family - mine]
        own = self.own(node)
        if edges:
            sure = [e for e in edges if e.confident] or edges
            return list(_simplify([self.guard_selectors(e.guards, e.path, e.caller) | own for e in sure]))
        if name not in RUN_BY_FRAMEWORK and not self.index.callers(node) and self.index.lands_elsewhere(node):
            return None
        return [own]

    def _caller_class(self, edge: Edge) -> str | None:
        module, _, qual = edge.caller.partition(":")
        return self.index.owner_class(module, qual)

    def _class_uses(self, node: str, depth: int) -> Reach | None:
        """The ways into a class nobody builds, for a table of choices in its body (``_kinds = {"x":
        X}``): the calls of its class- and static methods, which are what read such a table."""
        d = self.index.defs.get(node)
        if d is None or d.kind != "c":
            return None
        alts: list[Conj] = []
        found = False
        for _name, method in sorted(self.index.methods.get(node, {}).items()):
            r = self.reach(method, depth + 1)
            if r is not None:
                found = True
                alts.extend(r)
        return _simplify(alts) if found else None

    def _alternatives(self, node: str, depth: int) -> list[Conj] | None:
        d = self.index.defs.get(node)
        if d is None:
            return self._module_alternatives(node, depth)
        if d.kind == "c":
            return self._class_alternatives(node, depth)
        owner = f"{node.partition(':')[0]}:{d.owner}"
        if node in self.index.abstract:
            # An abstract body runs only when an override calls it (``super().m()``): the class's
            # ways in, or a caller that holds a concrete instance, never reach it.
            return self._via_edges(self._super_calls(node, owner), depth)
        callers = self._callers(node)
        if callers and all(self._dead(e) for e in callers):
            return None  # only stored under keys its table's flag never holds: nothing runs it
        calls = self._via_edges(callers, depth, node, node=node)
        if not d.owner:
            return calls
        name = node.rpartition(".")[2]
        # The class of a method is no further caller; a subclass that overrides the method runs
        # its own (its ``super()`` call, if any, is one of ``calls``).
        # A subclass with a constructor of its own runs that one: its ways in reach the base's
        # only through its ``super().__init__()`` call (one of ``calls``), as for any method.
        cls = self._class_ways_for(owner, name, depth)
        if cls is not None and self._only_from_its_family(node, owner):
            # A public method called only from the classes it derives from or that derive from it is
            # called from outside too, through receivers we cannot read: its class's ways in hold.
            # When every such call is gated on a platform (``if _is_npu: return self.forward_npu``
            # in the base's dispatcher, or a base's ``forward_musa`` that the dispatcher picks on
            # MUSA), one of those platforms still holds.
            gates = self._platform_gates(node, depth)
            if gates and all(gates):
                return list(_simplify([c | g for c in cls for g in gates]))
            return list(cls)
        if cls is not None and name in _CONSTRUCTORS:
            # Building the class (or a subclass that keeps its constructor) runs it.
            return [*cls, *(calls or [])]
        if calls is not None and d.params[:1] != ("self",) and all(e.on_class for e in self._callers(node)):
            # A class- or static method called on its class by name (``LayerScatterModes.init_new(...)``)
            # needs no instance: its callers' ways in are its own, not also those that build its
            # class. Called on a class picked elsewhere (``quant_cls.from_config(...)``), the
            # ways that pick the class still hold.
            return calls
        if calls is None and not self._named_anywhere(name) and self._others_named(owner, name):
            # No call, reference or lookup of this name anywhere in the target, while its class's
            # other methods are called: nothing of sglang runs it, so its class's ways in are none
            # of its own (and it leads nowhere).
            return None
        if calls is None:
            return list(cls) if cls is not None else None
        if calls == list(_FREE):
            return list(cls) if cls is not None else calls
        if cls is None or cls == _FREE:
            return calls
        return _possible(
            [*(a | b for a in calls for b in cls), *self._through_the_model(node, name, cls, depth)]
        )

    def _through_the_model(self, node: str, name: str, cls: Reach, depth: int) -> list[Conj]:
        """More ways into method ``node`` of a model class (every way into its class is a
        checkpoint's architecture): the calls of its name on a receiver of unknown class. The
        runner holds the loaded model in an attribute whose class the checkpoint picks, so a call
        it makes (``model.set_x(...)``) runs this method too, beside a wrapper model's call with a
        known receiver. A bare word (``init``, ``run``) or a name something we cannot see may run
        (a lookup by string, Python or torch) adds nothing."""
        if not all(any(s[0] == "arch" for s in c) for c in cls):
            return []
        if "_" not in name.strip("_") or self.index.run_unseen(name):
            return []
        edges = self.index.unresolved_calls(node)
        loose = self._via(edges, depth, node) if edges else None
        return [a | b for a in loose or [] for b in cls if _can_hold(a | b)]

    def _module_alternatives(self, node: str, depth: int) -> list[Conj] | None:
        """Module-level code runs where the module is first imported: the ways into the import
        statements that name it. A package's ``__init__`` (run by the import of any module in it),
        a module imported by a string somewhere, or one no statement imports (an entry point, or
        loaded by a name we cannot read) runs for anyone."""
        module = node.partition(":")[0]
        f = self.index.files.get(module)
        edges = self.index.importers.get(module, [])
        if f is None or not edges or f.path.endswith("__init__.py") or self.index.imported_by_name(module):
            return list(_FREE)
        found = self._via_edges(edges, depth)
        return found if found is not None else list(_FREE)

    def _named_anywhere(self, name: str) -> bool:
        """Whether any call, reference or ``getattr`` lookup in the target (tests aside) names
        ``name``, other than wrappers of that name handing the call on; a dunder or ``forward`` (run
        by Python or by torch's ``module(x)``) counts too."""
        return self.index.run_unseen(name) or (
            self.index.is_named(name) and not self.index.called_by_namesakes_only(name)
        )

    def _others_named(self, owner: str, name: str) -> bool:
        """Whether a method of class ``owner`` other than ``name`` is called, referenced or looked
        up by its name: the class is used through its methods, and ``name`` is not among them."""
        return any(
            other != name and not other.startswith("__") and self.index.is_named(other)
            for other in self.index.methods.get(owner, {})
        )

    def _class_ways_for(self, cls: str, name: str, depth: int) -> Reach | None:
        """The ways into class ``cls`` whose instances run its own method ``name``: those of the
        class itself and of the subclasses that do not override ``name``."""
        below = self.index.descendants(cls)
        if not any(name in self.index.methods.get(sub, {}) for sub in below):
            return self.reach(cls, depth)
        alts = self._class_alternatives(cls, depth, name)
        registered = self._registered.get(cls)
        if alts is None and not registered:
            return None
        alts = [*(alts or []), *(self._way(cls, r) for r in sorted(registered or ()))]
        own = self.own(cls)
        return _simplify([c | own for c in alts])

    def _super_calls(self, node: str, owner: str) -> list[Edge]:
        """The calls of method ``node`` made by same-named methods of classes derived from ``owner``."""
        name = node.rpartition(".")[2]
        below = self.index.descendants(owner)
        out = []
        for edge in self.index.callers(node):
            module, _, qual = edge.caller.partition(":")
            if qual.rpartition(".")[2] == name and self.index.owner_class(module, qual) in below:
                out.append(edge)
        return out

    def _only_from_its_family(self, node: str, owner: str) -> bool:
        if node.rpartition(".")[2].startswith("_"):
            return False
        edges = self.index.callers(node)
        if not edges:
            return False
        # Calls from the class itself keep their guards (``if x: self.setup()``); calls from the
        # classes above or below it (``super().forward()``) say nothing of who else calls it.
        family = self.index.ancestors(owner) | self.index.descendants(owner)
        for edge in edges:
            module, _, qual = edge.caller.partition(":")
            if self.index.owner_class(module, qual) not in family:
                return False
        return True

    def _class_alternatives(self, node: str, depth: int, method: str = "") -> list[Conj] | None:
        """The ways the class is built, and those of its subclasses (only the ones that do not
        override ``method``, when given: theirs run their own)."""
        edges = self._callers(node)
        factories = [e for e in edges if self.index.built_by_cls(e.caller, node)]
        made = self._via_edges([e for e in edges if e not in factories], depth, node=node)
        # A class a flag's registry holds (a quantization config) is picked by its key: another
        # config that builds it through its factory for some layers (``X.from_config(...)`` in a
        # wrapper's ``get_quant_method``) is no way in of its own that the code shows for whom.
        for edge in factories if not self._registered.get(node) else []:
            ways = self._factory_ways(edge, depth)
            if ways is None:
                ways = self._via_edges([edge], depth, node=node)
            if ways is not None:
                made = [*(made or []), *ways]
        subs: list[Conj] = []
        any_sub = False
        for sub in sorted(self.index.subclasses.get(node, [])):
            if not self._made_somehow(sub):
                continue  # a subclass nothing builds, registers or derives from adds no way in
            if method and method in self.index.methods.get(sub, {}):
                continue
            r = self._class_ways_for(sub, method, depth) if method else self.reach(sub, depth)
            if r is not None:
                any_sub = True
                subs.extend(r)
        if made is None and not any_sub:
            return None  # neither built nor subclassed here: registered, declared, or unknown
        return (made or []) + subs

    def _callers(self, node: str) -> list[Edge]:
        """The calls that lead into ``node``, less the reads of a registry it is registered in by
        a flag's value: the registration is that way in already, for whoever reads the registry
        (one read seen, such as a platform's own subset, must not hide the others)."""
        if self._only is not None and self._only[0] == node:
            return self._only[1]
        edges = self.index.callers(node)
        registered = self._registered.get(node)
        if not registered:
            return edges
        return [e for e in edges if not any(g[0] == "K" and self._is_flag_key(g, e.path) for g in e.guards)]

    def _is_flag_key(self, atom: tuple[str, ...], path: str) -> bool:
        sel = atom_selector(atom, self._flags(path), self.knowledge)
        return sel is not None and sel[0] == "flag"

    def _way(self, node: str, sel: Selector) -> Conj:
        """The way in that registration ``sel`` of ``node`` is, with the platform it is made on."""
        platform = self._registered_on.get((node, sel))
        return frozenset({sel, ("platform", platform, ())}) if platform else frozenset({sel})

    def _factory_ways(self, edge: Edge, depth: int) -> list[Conj] | None:
        """The ways a class method builds its class: the calls that name the class
        (``Buffers.create(...)``), under the method's own tests; None when no call names it (the
        method's own ways in then hold, as for any call)."""
        calls = [e for e in self.index.callers(edge.caller) if e.on_class]
        up = self._via(calls, depth) if calls else None
        if up is None:
            return None
        here = self.guard_selectors(edge.guards, edge.path, edge.caller)
        return [c | here for c in up]

    def _made_somehow(self, cls: str) -> bool:
        return bool(self.index.callers(cls) or self._registered.get(cls) or self.index.subclasses.get(cls))


def _less_failed(held: set[Selector], failed: set[Selector]) -> set[Selector]:
    """``held`` with the values of the value tests that ``failed`` on the same path taken out of
    the same flag's selector (``is_eagle()`` after ``if is_frozen_kv_mtp(): return``). A failed
    test with no held one of its flag says nothing sure (the flag may be unset) and is dropped."""
    gone: dict[str, set[str]] = {}
    for sel in failed:
        if sel[0] == "flag" and sel[2]:
            gone.setdefault(sel[1], set()).update(sel[2])
    out: set[Selector] = set()
    for sel in held:
        if sel[0] == "flag" and sel[2] and sel[1] in gone:
            kept = tuple(v for v in sel[2] if v not in gone[sel[1]])
            if kept:
                sel = (sel[0], sel[1], kept)
        out.add(sel)
    return out


def _value_test_atom(stored: str, flags: Mapping[str, FlagInfo]) -> Atom | None:
    """The guard atom of a stored value (a type expression, see :mod:`extractor.reach.receiver_facts`)
    that is one value test of a flag's accessor: ``m.get_moe_runner_backend().is_marlin()``."""
    if "|" in stored or not stored.endswith("()"):
        return None
    head, _, method = stored[:-2].rpartition(".")
    test = VALUE_TEST.match(method)
    if test is None or not head.endswith("()") or head.count("(") != 1:
        return None
    accessor = ACCESSOR.match(head[:-2].rpartition(".")[2])
    if accessor is None or accessor.group(1) not in flags:
        return None
    return ("i", accessor.group(1), "enum", test.group(1))


def _value_tests(index: TargetIndex) -> dict[tuple[str, str], tuple[str, ...]]:
    """(flag dest, ``x``) -> the members ``is_x()`` of the class named after that flag returns true
    for (``return self == Algo.X`` or ``return self in (Algo.X, Algo.Y)``); a name two such classes
    answer differently says nothing."""
    found: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for f in index.files.values():
        for test in f.tests:
            if test[0] != "p" or len(test) != 3:
                continue
            owner, _, method = test[1].rpartition(".")
            dest = class_flag_name(owner) if owner and "." not in owner else None
            atom = f.atoms[int(test[2])]
            if dest is None or not method.startswith("is_") or atom[:3] != ("v", dest, "enum"):
                continue
            found.setdefault((dest, method[3:]), set()).add(tuple(atom[3:]))
    out = {key: next(iter(v)) for key, v in sorted(found.items()) if len(v) == 1 and next(iter(v))}
    # ``is_family()`` returning ``self.is_a() or self.is_b()``: the members of either.
    for f in index.files.values():
        for test in f.tests:
            if test[0] != "o":
                continue
            owner, _, method = test[1].rpartition(".")
            dest = class_flag_name(owner) if owner and "." not in owner else None
            if dest is None or not method.startswith("is_") or (dest, method[3:]) in out:
                continue
            parts = [out.get((dest, x)) for x in test[2:]]
            if parts and all(parts):
                out[(dest, method[3:])] = tuple(dict.fromkeys(m for p in parts if p for m in p))
    return out


def _broadest_first(values: tuple[str, ...], mentions: Mapping[str, int]) -> tuple[str, ...]:
    """The values the launch code compares the flag with or sets it to most often come first: the
    first is offered in place of a value that selects a failing path, and registry order alone would
    offer a model-specific one. One mention is a special case, not a sign of breadth."""
    if max((mentions.get(v, 0) for v in values), default=0) < 2:
        return values
    return tuple(sorted(values, key=lambda v: -mentions.get(v, 0)))


def _possible(alts: list[Conj]) -> list[Conj]:
    """The ways in that can hold: a chain that needs two values of one flag, two platforms or two
    unrelated checkpoints joins a call with a receiver it never has on that chain (a base-typed
    attribute resolved to every subclass). When none can hold, a way in was missed: all are kept,
    and the wording says nothing sure of them."""
    kept = [c for c in alts if _can_hold(c)]
    return kept if kept else alts


def _can_hold(conj: Conj) -> bool:
    values: dict[str, set[str]] = {}
    for kind, name, vals in conj:
        if kind == "flag" and vals:
            if name in values:
                values[name] &= set(vals)
            else:
                values[name] = set(vals)
    if any(not v for v in values.values()):
        return False
    return len({s[1] for s in conj if s[0] == "platform"}) <= 1 and not disjoint_archs(conj)


def _simplify(alts: list[Conj]) -> Reach:
    """Alternatives without duplicates or absorbed ones, values of one flag merged, kept small."""
    if not alts or any(not c for c in alts):
        return _FREE
    kept = _unabsorbed(set(alts))
    merged = _unabsorbed(set(_merge_values([_one_value_per_flag(_one_architecture(c)) for c in kept])))
    if len(merged) > _MAX_ALTERNATIVES:
        common = _common(merged)
        merged = [common] if common else []
    out = []
    for c in merged:
        c = frozenset(s for s in c if len(s[2]) <= (_MAX_ARCHS if s[0] == "arch" else _MAX_VALUES))
        if c:
            out.append(c)
    if not out or len(out) != len(merged):
        return _FREE
    return tuple(sorted(out, key=lambda c: sorted(c)))


def _unabsorbed(alts: set[Conj]) -> list[Conj]:
    """The alternatives no other one absorbs: a way in that needs all another needs, or narrower
    values of it (``A and --x v`` beside ``--x v or w``), adds nothing."""
    order = sorted(alts, key=lambda c: (len(c), sorted(c)))
    kept: list[Conj] = []
    for i, c in enumerate(order):
        # Checked against every other one, not only those kept so far: a narrower alternative of
        # the same size (``--x a`` beside ``--x a or b``) can sort first.
        if not any(_absorbs(k, c) and (not _absorbs(c, k) or j < i) for j, k in enumerate(order) if j != i):
            kept.append(c)
    return kept


def _absorbs(k: Conj, c: Conj) -> bool:
    """Whether the way in ``c`` needs all that ``k`` needs (so ``k`` holding is the wider case)."""
    return all(any(_implies(s, t) for s in c) for t in k)


def _implies(s: Selector, t: Selector) -> bool:
    """Whether selector ``s`` holding means ``t`` holds (same choice, ``s``'s values among ``t``'s)."""
    if s == t:
        return True
    if s[0] != t[0]:
        return False
    if s[0] == "arch":
        return arch_names(s) <= arch_names(t)
    if s[0] not in ("flag", "env") or s[1] != t[1]:
        return False
    return not t[2] or (bool(s[2]) and set(s[2]) <= set(t[2]))


def _one_architecture(conj: Conj) -> Conj:
    """Two sets of architectures on one chain: a checkpoint declares one, so it is in both."""
    archs = [s for s in conj if s[0] == "arch"]
    if len(archs) < 2:
        return conj
    names = [set(s[2]) | ({s[1]} if s[1] else set()) for s in archs]
    common = set.intersection(*names)
    if not common:
        return conj  # different levels (a pipeline and the model it loads): both hold
    values = tuple(sorted(common))
    sel: Selector = ("arch", values[0], ()) if len(values) == 1 else ("arch", "", values)
    return (conj - set(archs)) | {sel}


def _one_value_per_flag(conj: Conj) -> Conj:
    """One chain that sets a flag twice sets it once: to the values both allow (or just "set")."""
    by_flag: dict[str, list[Selector]] = {}
    for s in conj:
        if s[0] == "flag":
            by_flag.setdefault(s[1], []).append(s)
    out = set(conj)
    for name, sels in by_flag.items():
        if len(sels) < 2:
            continue
        valued = [set(s[2]) for s in sels if s[2]]
        if not valued:
            continue
        common = set.intersection(*valued)
        if not common:
            continue  # no value satisfies both: keep what was read, claim nothing more
        out -= set(sels)
        out.add(("flag", name, tuple(sorted(common))))
    return frozenset(out)


def _merge_values(alts: list[Conj]) -> list[Conj]:
    """Two ways in that differ only in the values of one choice are one way with both values:
    ``{A=x, B}`` and ``{A=y, B}`` become ``{A in (x, y), B}``, ``{arch X}`` and ``{arch Y}`` one set;
    repeated, so ``{A=x, C=u}``, ``{A=y, C=u}`` and ``{A in (x, y), C=v}`` end as one."""
    out = list(dict.fromkeys(alts))
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(out):
            for j in range(i + 1, len(out)):
                one = _merged_pair(a, out[j])
                if one is not None:
                    out[i] = one
                    del out[j]
                    out = list(dict.fromkeys(out))
                    merged = True
                    break
            if merged:
                break
    return out


def _merged_pair(a: Conj, b: Conj) -> Conj | None:
    """``a`` or ``b`` as one way in, when they differ only in the values of one choice."""
    only_a, only_b = a - b, b - a
    if len(only_a) != 1 or len(only_b) != 1:
        return None
    (s,), (t,) = only_a, only_b
    if s[0] == t[0] == "arch":
        values = tuple(sorted(arch_names(s) | arch_names(t)))
        sel: Selector = ("arch", values[0], ()) if len(values) == 1 else ("arch", "", values)
    elif s[0] == t[0] == "flag" and s[1] == t[1] and s[2] and t[2]:
        # Not variables: their values include marks ("on" by default, set at launch) no list joins.
        sel = ("flag", s[1], tuple(sorted(set(s[2]) | set(t[2]))))
    else:
        return None
    return (a & b) | {sel}


def _common(alts: list[Conj]) -> Conj:
    """What every alternative requires: shared selectors, and a flag all of them set (values pooled)."""
    first, *others = alts
    out: set[Selector] = set()
    for sel in first:
        kind, name, values = sel
        pooled = set(values)
        for c in others:
            same = [s for s in c if s[0] == kind and s[1] == name]
            if not same:
                break
            for s in same:
                if not s[2]:
                    pooled = set()
                    values = ()
                pooled.update(s[2])
        else:
            out.add((kind, name, tuple(sorted(pooled)) if values else ()))
    return frozenset(out)
