"""What the target itself says about its command line and environment, read at the analysed sha.

sglang declares its command-line flags in its server-args modules and its environment variables in
an environment registry. Enrichment needs both to speak in the user's terms: a guard that reads
``server_args.enable_foo`` is about the flag ``--enable-foo``; one that reads
``envs.SGLANG_BAR.get()`` is about the variable ``SGLANG_BAR``.

Two declaration styles are read, because both exist in sglang's history:

* dataclass fields annotated ``A[T, "help"]`` / ``A[T, Arg(...)]`` (``A`` is ``typing.Annotated``):
  the flag is ``Arg(cli_name=...)`` or the field name with ``_`` turned into ``-``;
  ``Arg(no_cli=True)`` fields have no flag; ``aliases`` are extra spellings of the same flag;
* ``parser.add_argument("--x", "--y", dest=..., help=..., choices=...)`` calls anywhere in the file:
  the destination is ``dest=`` or the first long option with ``-`` turned into ``_``.

Flags are kept per *namespace*: ``python/sglang/srt/`` and ``python/sglang/multimodal_gen/`` each
have their own ``ServerArgs`` with different flags, and a site is resolved against the namespace it
lives in (``Knowledge.flags_for``). The whole module only reads syntax trees; it never imports or
runs the target, and bad input gives fewer mappings instead of an exception.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import functools
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from extractor.analysis.walk import dotted_name
from extractor.prose.declarations import (
    ENV_NAME_RE,
    EnvInfo,
    FlagInfo,
    ModuleConstants,
    namespace_of_file,
    read_env_registry,
    read_flags,
    unset_subject,
)
from extractor.prose.declarations import module_constants as _file_constants
from extractor.prose.validations import validation_checks

# A string that may be a choice's value: one short lowercase word (``"fa3"``, ``"torch_native"``).
_WORD = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

__all__ = [
    "ENV_NAME_RE",
    "KNOWLEDGE_PATH_GLOBS",
    "EnvInfo",
    "FlagInfo",
    "Knowledge",
    "ModuleConstants",
    "build_knowledge",
    "is_knowledge_path",
    "module_constants",
    "requirement_name",
]

KNOWLEDGE_PATH_GLOBS: tuple[str, ...] = (
    "python/sglang/*server_args*.py",
    "python/sglang/*arg_groups/*.py",
    "python/sglang/*environ.py",
    "python/sglang/*envs.py",
    # The package metadata: which distribution provides a module the code imports.
    "python/pyproject*.toml",
)
"""Target files :func:`build_knowledge` reads, matched with :func:`fnmatch.fnmatchcase` against the
repo-relative ``/`` path (so ``*`` also crosses ``/``); paths under a test folder are left out
(use :func:`is_knowledge_path`, which applies both rules)."""

_TEST_PART_RE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$")


def is_knowledge_path(path: str) -> bool:
    """Whether :func:`build_knowledge` wants this repo-relative file."""
    if _TEST_PART_RE.search(path):
        return False
    return any(fnmatch.fnmatchcase(path, g) for g in KNOWLEDGE_PATH_GLOBS)


def module_constants(module: ast.Module, path: str = "", text: str | None = None) -> ModuleConstants:
    """:func:`extractor.prose.declarations.module_constants`; a server-args module's flags are
    the launcher's, read by :func:`build_knowledge`, never a script's own."""
    return _file_constants(module, "" if is_knowledge_path(path) else path, text)


_V = TypeVar("_V")


def _frozen(d: Mapping[str, _V]) -> Mapping[str, _V]:
    # A plain dict copy, typed read-only: a mappingproxy would not pickle, and the pipeline
    # hands the knowledge to worker processes.
    return dict(d)


@dataclass(frozen=True, eq=False)
class Knowledge:
    """Flags and environment variables of the target at one sha.

    ``flags`` maps a destination attribute to its flag over every namespace (the namespace with
    the most flags wins a clash); ``flags_for(path)`` gives the mapping a site at ``path`` sees.
    """

    flags: Mapping[str, str] = field(default_factory=dict)
    env_vars: frozenset[str] = frozenset()
    flag_info: Mapping[str, FlagInfo] = field(default_factory=dict)
    """dest -> info, merged the same way as ``flags``."""
    scoped: Mapping[str, Mapping[str, FlagInfo]] = field(default_factory=dict)
    """namespace prefix -> dest -> info."""
    env_info: Mapping[str, EnvInfo] = field(default_factory=dict)
    arg_classes: frozenset[tuple[str, str]] = frozenset()
    """(namespace, class name) of classes whose attributes *are* the flag values (``ServerArgs``
    and the mixins/subclasses declared beside it): inside them ``self.x`` reads flag ``x``."""
    default_namespace: str = ""
    """The namespace used for files outside every namespace (the one with the most flags)."""
    checks: Mapping[str, Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]]] = field(default_factory=dict)
    """namespace prefix -> dest -> ``(op, values)`` the server-args validation demands
    (:func:`extractor.prose.validations.validation_checks`)."""
    mentions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """flag -> value -> how often the declaring files compare the flag's attribute with the value or
    assign it (``self.attention_backend = "triton"``): the value the launch code falls back to and
    accepts most is the broadest one."""
    implied: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """switch -> the flags the launch code turns it on for (``if self.lora_paths: ...
    enable_lora=True``): given, they put a site behind the switch on the path too."""
    env_launched: frozenset[str] = frozenset()
    """Environment variables the launch code turns on itself for some setups (``envs.X.set(True)``,
    ``os.environ["X"] = "1"``): unsetting one does not keep its path away there."""
    env_launched_off: frozenset[str] = frozenset()
    """Environment variables the launch code turns off itself for some setups (``envs.X.set(False)``):
    leaving one alone does not keep it on there."""
    picked: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """flag -> the values of its choices the launch code sets it to itself (``self.x = "v"``,
    ``return {"x": "v"}``, ``x = "v"``; for a flag with no default also ``return "v"``), other than
    its default: some launches get them without giving them (``auto`` resolved for the model and
    hardware). See :func:`_picked`."""
    rewritten: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """flag -> ``(value, when)`` of each place the launch code replaces a value given for it, under
    a test that compares it with something other than ``None`` (``if topk == 1 and draft != steps
    + 1: draft = steps + 1``), receivers left out: there a value of the user's is not what the code
    reads. See :func:`_rewrites`."""
    distributions: tuple[str, ...] = ()
    """The requirements the target's package metadata declares (its dependencies and extras, the
    main ``pyproject.toml`` first), as written less extras and markers: ``flashinfer_python==0.6.14``."""

    @classmethod
    def empty(cls) -> Knowledge:
        """Knowledge of nothing: every lookup misses."""
        return cls()

    def namespace_of(self, path: str) -> str:
        """The namespace whose flags a site in ``path`` reads."""
        best = ""
        for ns in self.scoped:
            if path.startswith(ns) and len(ns) > len(best):
                best = ns
        return best or self.default_namespace

    def flags_for(self, path: str) -> Mapping[str, FlagInfo]:
        """dest -> flag info as seen from a site in ``path`` (empty when nothing is known)."""
        ns = self.namespace_of(path)
        return self.scoped.get(ns, {})

    def is_arg_class(self, path: str, class_name: str | None) -> bool:
        """Whether ``self`` inside ``class_name`` (in ``path``) is a server-args object."""
        if not class_name:
            return False
        return (self.namespace_of(path), class_name.split(".")[-1]) in self.arg_classes

    def checks_for(self, path: str, dest: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What the server-args validation of ``path``'s namespace demands of flag ``dest``."""
        return self.checks.get(self.namespace_of(path), {}).get(dest, ())

    def env_of(self, name: str) -> EnvInfo | None:
        """What the target's env registry declares about ``name`` (type and default), if anything."""
        return self.env_info.get(name)

    def launches_env(self, name: str) -> bool:
        """Whether the launch code turns variable ``name`` on itself for some setups."""
        return name in self.env_launched

    def knows_distributions(self) -> bool:
        """Whether the target's package metadata declared any requirement."""
        return bool(self.distributions)

    def distribution_for(self, module: str) -> str | None:
        """The declared requirement that provides import ``module``: the distribution of that
        name, else the first one whose name holds it as whole words (``flashinfer`` in
        ``flashinfer_python``, ``modelopt`` in ``nvidia-modelopt``); None when none does."""
        want = _dist_key(module.split(".")[0])
        if not want:
            return None
        fallback = None
        for req in self.distributions:
            have = _dist_key(requirement_name(req))
            if have == want:
                return req
            # A numbered name (``flash-attn-4``) is another major line, not the same package.
            if (
                fallback is None
                and f"-{want}-" in f"-{have}-"
                and not re.search(r"-\d", have.replace(want, ""))
            ):
                fallback = req
        return fallback

    def fingerprint(self) -> str:
        """A stable hash of everything enrichment reads from here (part of cache keys). ``mentions``
        is left out: only reach reads it, and its cache key holds every file's blob already."""
        return self._fingerprint

    @functools.cached_property
    def _fingerprint(self) -> str:
        payload = {
            "scoped": {
                ns: {
                    d: [i.flag, i.help, list(i.choices), i.is_bool, list(i.aliases), i.is_list, i.optional]
                    for d, i in sorted(m.items())
                }
                for ns, m in sorted(self.scoped.items())
            },
            "env": {n: [i.kind, i.default] for n, i in sorted(self.env_info.items())},
            "env_vars": sorted(self.env_vars),
            "classes": sorted(list(c) for c in self.arg_classes),
            "default": self.default_namespace,
            "distributions": list(self.distributions),
            "checks": {
                ns: {d: [[op, list(v)] for op, v in cs] for d, cs in sorted(m.items())}
                for ns, m in sorted(self.checks.items())
            },
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Knowledge) and self.fingerprint() == other.fingerprint()


# ---------------------------------------------------------------------------------------------
# Building the whole base
# ---------------------------------------------------------------------------------------------


_REQ_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def requirement_name(req: str) -> str:
    """The distribution name a requirement starts with (``flashinfer_python==0.6.14`` ->
    ``flashinfer_python``); ``""`` when it starts with none."""
    m = _REQ_NAME_RE.match(req)
    return m.group(0) if m else ""


def _dist_key(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Flashinfer_Python`` -> ``flashinfer-python``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_requirements(data: bytes) -> list[str]:
    """The requirements of a ``pyproject.toml`` (dependencies, then each extra), each as
    ``name`` plus its version specifier; nothing for a file that is not valid TOML."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    project = doc.get("project")
    if not isinstance(project, dict):
        return []
    raw: list[object] = list(project.get("dependencies") or [])
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for group in extras.values():
            raw.extend(group if isinstance(group, list) else [])
    out = []
    for item in raw:
        if not isinstance(item, str):
            continue
        req = item.split(";", 1)[0].strip()
        m = _REQ_NAME_RE.match(req)
        if m is None:
            continue
        spec = re.sub(r"^\s*\[[^\]]*\]", "", req[m.end() :]).strip()
        # A direct reference (``pkg @ git+https://...``) is no version a pip line can pin.
        out.append(m.group(0) + ("" if spec.startswith("@") else spec.replace(" ", "")))
    return out


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def filled_when_unset(tree: ast.Module) -> set[str]:
    """Attributes the module sets when they are unset: ``if x.dest is None: x.dest = ...``, and
    those a method resolves in place on every launch (:func:`_resolved_in_place`)."""
    out: set[str] = set()
    # A method every run of its caller runs: called as a whole statement of a method's body, not
    # under a test of its own (``if self.x is not None: self._resolve_x()`` fills only when given).
    always = {
        stmt.value.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for stmt in node.body
        if isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == "self"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in always:
            out |= _resolved_in_place(node)
        if not isinstance(node, ast.If):
            continue
        subject = _unset_attribute(node.test)
        if subject is None:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == subject.attr for t in stmt.targets
            ):
                out.add(subject.attr)
    return out


def _resolved_in_place(func: ast.FunctionDef) -> set[str]:
    """``raw = self.dest`` ... ``self.dest = config`` in one method, with no return before the
    store: the launch always replaces what was given (or not) with the value it built, so the
    attribute is set whether or not the user gave the flag."""
    out: set[str] = set()
    read: set[str] = set()
    for stmt in func.body:
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            break
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name)
            and target.attr in read
        ):
            out.add(target.attr)
        read.update(
            n.attr
            for n in ast.walk(stmt)
            if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
        )
    return out


def build_knowledge(files: Mapping[str, bytes]) -> Knowledge:
    """Knowledge from the given files (repo-relative path -> bytes at the analysed sha).

    Files that :func:`is_knowledge_path` rejects are ignored; a file that does not parse gives
    nothing. Never raises on any content.
    """
    per_ns: dict[str, list[tuple[FlagInfo, bool]]] = {}
    fields: dict[str, set[str]] = {}
    field_defaults: dict[str, dict[str, str]] = {}
    classes: set[tuple[str, str]] = set()
    bases: dict[tuple[str, str], list[str]] = {}
    env: dict[str, EnvInfo] = {}
    checks: dict[str, dict[str, list[tuple[str, tuple[str, ...]]]]] = {}
    filled: dict[str, set[str]] = {}
    mentions: dict[str, dict[str, int]] = {}
    assigned: dict[str, set[str]] = {}
    rewrites: dict[str, list[tuple[str, str]]] = {}
    returned: set[str] = set()
    launched: set[str] = set()
    launched_off: set[str] = set()
    turns_on: set[tuple[str, str, bool]] = set()
    requirements: dict[str, str] = {}
    # The main metadata first: a platform's variant adds only what it alone declares.
    for path in sorted(files, key=lambda p: (not p.endswith("/pyproject.toml"), p)):
        if is_knowledge_path(path) and path.endswith(".toml"):
            for req in declared_requirements(files[path]):
                requirements.setdefault(_dist_key(requirement_name(req)), req)
    for path in sorted(files):
        if not is_knowledge_path(path) or path.endswith(".toml"):
            continue
        tree = _parse(files[path])
        if tree is None:
            continue
        try:
            ns = namespace_of_file(path)
            ff = read_flags(path, tree)
            for info in ff.flags:
                per_ns.setdefault(ns, []).append((info, info.flag in ff.deprecated))
            classes.update((ns, c) for c in ff.classes)
            for dest, op, values in validation_checks(tree, ff.classes):
                found = checks.setdefault(ns, {}).setdefault(dest, [])
                if (op, values) not in found:
                    found.append((op, values))
            fields.setdefault(ns, set()).update(ff.fields)
            for name, default in ff.field_defaults.items():
                field_defaults.setdefault(ns, {}).setdefault(name, default)
            _count_mentions(tree, mentions)
            _assigned_values(tree, assigned)
            _rewrites(tree, rewrites)
            returned.update(_returned_words(tree))
            launched.update(_env_turned(tree, True))
            launched_off.update(_env_turned(tree, False))
            turns_on.update(_turned_on(tree))
            filled.setdefault(ns, set()).update(filled_when_unset(tree))
            for c, bs in ff.bases.items():
                bases.setdefault((ns, c), []).extend(bs)
            base = path.rsplit("/", 1)[-1]
            if base in ("environ.py", "envs.py"):
                for name, info_env in read_env_registry(tree).items():
                    env.setdefault(name, info_env)
        except (RecursionError, AttributeError, TypeError, ValueError):
            continue
    # A subclass of an arg class declared beside it holds flag values too, and so does a mixin
    # it derives from (``class ServerArgs(DisaggArgsMixin)``): its ``self`` is the args object.
    changed = True
    while changed:
        changed = False
        for (ns, c), bs in bases.items():
            if (ns, c) not in classes and any((ns, b) in classes for b in bs):
                classes.add((ns, c))
                changed = True
            if (ns, c) in classes:
                for b in bs:
                    if (ns, b) in bases and (ns, b) not in classes:
                        classes.add((ns, b))
                        changed = True
    scoped: dict[str, dict[str, FlagInfo]] = {}
    for ns, entries in per_ns.items():
        m: dict[str, FlagInfo] = {}
        # Non-deprecated declarations win; among equals the first in file order.
        for info, _dep in sorted(entries, key=lambda e: e[1]):
            m.setdefault(info.dest, info)
        # Older layouts register ``"--tensor-parallel-size", "--tp-size"`` (argparse dest
        # ``tensor_parallel_size``) and copy the value into the field ``tp_size``: the alias
        # that spells a declared field stands for that field, when no flag claims it already.
        declared = fields.get(ns, set())
        for info, _dep in entries:
            for alias in info.aliases:
                dest = alias[2:].replace("-", "_")
                if dest in declared and dest not in m:
                    others = tuple(a for a in (info.flag, *info.aliases) if a != alias)
                    m[dest] = dataclasses.replace(info, flag=alias, dest=dest, aliases=others)
        for dest, default in field_defaults.get(ns, {}).items():
            # ``default=role_default`` read back from the field: the class's own default is it.
            if dest in m and not m[dest].default and not m[dest].optional and not m[dest].is_bool:
                m[dest] = dataclasses.replace(m[dest], default=default)
        for dest in filled.get(ns, set()) & m.keys():
            # The validation fills it when not given: leaving it out does not turn it off.
            m[dest] = dataclasses.replace(m[dest], optional=False)
        scoped[ns] = m
    order = sorted(scoped, key=lambda n: (-len(scoped[n]), n))
    merged: dict[str, FlagInfo] = {}
    for ns in order:
        for dest, info in scoped[ns].items():
            merged.setdefault(dest, info)
    return Knowledge(
        flags=_frozen({d: i.flag for d, i in merged.items()}),
        env_vars=frozenset(env),
        flag_info=_frozen(merged),
        scoped=_frozen({ns: _frozen(m) for ns, m in scoped.items()}),
        env_info=_frozen(env),
        arg_classes=frozenset(classes),
        default_namespace=order[0] if order else "",
        checks=_frozen({ns: _frozen({d: tuple(cs) for d, cs in m.items()}) for ns, m in checks.items()}),
        mentions=_frozen(
            {
                merged[d].flag: _frozen(dict(sorted(m.items())))
                for d, m in sorted(mentions.items())
                if d in merged and merged[d].choices
            }
        ),
        implied=_frozen(_implied(turns_on, merged)),
        picked=_frozen(_picked(assigned, returned, merged)),
        rewritten=_frozen(
            {
                merged[d].flag: tuple(dict.fromkeys(found))[:_MAX_REWRITES]
                for d, found in sorted(rewrites.items())
                if d in merged
            }
        ),
        env_launched=frozenset(launched),
        env_launched_off=frozenset(launched_off),
        distributions=tuple(requirements.values()),
    )


_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.Match)


def _unset_attribute(test: ast.expr) -> ast.Attribute | None:
    """``x.b`` of a test ``x.b is None`` or ``not x.b``: a setting left out (or off)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand if isinstance(test.operand, ast.Attribute) else None
    return unset_subject(test)


def _sure_statements(stmt: ast.stmt) -> list[ast.stmt]:
    """``stmt`` when it runs unconditionally; the plain statements of an unset test's body."""
    if not isinstance(stmt, _CONDITIONAL):
        return [stmt]
    if isinstance(stmt, ast.If) and _unset_attribute(stmt.test) is not None:
        return [t for t in stmt.body if not isinstance(t, _CONDITIONAL)]
    return []


def _turned_on(tree: ast.Module) -> set[tuple[str, str, bool]]:
    """``(a, b, switch)`` for each ``if x.a: ... x.b = True`` (or ``x.override(..., b=True)``,
    ``switch`` true) and each ``if x.a and x.b is None: x.b = "value"`` (a value the launch code
    fills in when ``a`` is given, ``switch`` false)."""
    out: set[tuple[str, str, bool]] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        given = _given(node.test)
        if given is None:
            continue
        # Only what the block does whenever ``a`` is given: an assignment under a further test
        # (``if backend not in supported: x.disable_radix_cache = True``) is no sure consequence.
        # A further test that the switch is still unset (``if x.enable_lora is None:``) is the
        # default launch's path: what it sets is sure for anyone who leaves that switch out.
        sure = [t for s in node.body for t in _sure_statements(s)]
        for stmt in sure:
            for sub in ast.walk(stmt):
                if (
                    isinstance(sub, ast.Assign)
                    and len(sub.targets) == 1
                    and isinstance(sub.targets[0], ast.Attribute)
                    and isinstance(sub.value, ast.Constant)
                ):
                    if sub.value.value is True:
                        out.add((given, sub.targets[0].attr, True))
                    elif isinstance(sub.value.value, str) and sub.value.value:
                        out.add((given, sub.targets[0].attr, False))
                elif (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == "override"
                ):
                    out.update((given, k.arg, True) for k in sub.keywords if k.arg and _is_true(k.value))
    return out


def _given(test: ast.expr) -> str | None:
    """``a`` of a test ``x.a`` alone, or ``x.a`` beside ``is None`` checks (of what it fills)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    reads = [p for p in parts if isinstance(p, ast.Attribute)]
    rest = [p for p in parts if not isinstance(p, ast.Attribute)]
    if len(reads) != 1 or not all(
        isinstance(p, ast.Compare)
        and len(p.ops) == 1
        and isinstance(p.ops[0], ast.Is)
        and isinstance(p.comparators[0], ast.Constant)
        and p.comparators[0].value is None
        for p in rest
    ):
        return None
    return reads[0].attr


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _implied(
    turns_on: set[tuple[str, str, bool]], flags: Mapping[str, FlagInfo]
) -> dict[str, tuple[str, ...]]:
    """flag -> the flags whose giving sets it, both declared (a flag set by itself is none): a
    switch turned on, or an optional valued flag (off unless given) filled with a value."""
    out: dict[str, set[str]] = {}
    for given, target, switch in turns_on:
        a, b = flags.get(given), flags.get(target)
        if a is None or b is None or a is b:
            continue
        if (b.is_bool and switch) or (not b.is_bool and not switch and b.optional):
            out.setdefault(b.flag, set()).add(a.flag)
    return {flag: tuple(sorted(by)) for flag, by in sorted(out.items())}


def _assigned_values(tree: ast.Module, assigned: dict[str, set[str]]) -> None:
    """Add each string the code sets a name to: ``x.dest = "v"``, ``dest = "v"``, ``{"dest": "v"}``,
    ``table["dest"] = "v"`` and ``f(..., dest="v")``."""
    for node in ast.walk(tree):
        pairs: list[tuple[str, ast.expr]] = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str)
                ):
                    name = target.slice.value  # ``overrides["dest"] = "v"``
                if name:
                    pairs.append((name, node.value))
        elif isinstance(node, ast.Dict):
            pairs.extend(
                (k.value, v)
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            )
        elif isinstance(node, ast.Call):
            pairs.extend((k.arg, k.value) for k in node.keywords if k.arg)
        for name, value in pairs:
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and _WORD.match(value.value):
                assigned.setdefault(name, set()).add(value.value)


_MAX_REWRITES = 2
_ARGS_NAMES = frozenset({"self", "server_args", "args", "view"})
_RECEIVER_RE = re.compile(rf"\b(?:{'|'.join(sorted(_ARGS_NAMES))})\.")


def _rewrites(tree: ast.Module, out: dict[str, list[tuple[str, str]]]) -> None:
    """Add ``dest -> (value, when)`` for each ``if <test>: x.dest = <value of other settings>`` at
    the top of a function (its test is all that picks it) whose test holds ``x.dest`` to another value than
    the one it compares with (``!=``, ``<``, or ``==`` something computed): a value given for the
    flag is replaced where the test holds. Filling in a flag left out (``is None``) or resolving
    one of its words (``== "auto"``) replaces no value of the user's."""
    ifs = [
        stmt
        for func in ast.walk(tree)
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        for stmt in func.body
        if isinstance(stmt, ast.If)
    ]
    for node in ifs:
        compared = {
            c.left.attr
            for c in ast.walk(node.test)
            if isinstance(c, ast.Compare)
            and isinstance(c.left, ast.Attribute)
            and len(c.ops) == 1
            and (
                isinstance(c.ops[0], ast.NotEq | ast.Lt | ast.LtE | ast.Gt | ast.GtE)
                or (isinstance(c.ops[0], ast.Eq) and not isinstance(c.comparators[0], ast.Constant))
            )
            and not (isinstance(c.comparators[0], ast.Constant) and c.comparators[0].value is None)
        }
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if not isinstance(target, ast.Attribute) or target.attr not in compared:
                continue
            # Only a value worked out from other settings (``steps + 1``): a constant set under a
            # test at the top of a handler may need what calls the handler, which is not seen here.
            read = {
                n.attr
                for n in ast.walk(stmt.value)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id in _ARGS_NAMES
                and n.attr != target.attr
            }
            if not read:
                continue
            value = _RECEIVER_RE.sub("", ast.unparse(stmt.value))
            when = _RECEIVER_RE.sub("", ast.unparse(node.test))
            out.setdefault(target.attr, []).append((value, when))


def _env_turned(tree: ast.Module, on: bool) -> set[str]:
    """Variables the code turns on (``on``: ``envs.X.set(True)``, ``os.environ["X"] = "1"``) or
    off (``envs.X.set(False)``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "set"
            and isinstance(node.func.value, ast.Attribute)
            and ENV_NAME_RE.match(node.func.value.attr)
            and len(node.args) == 1
            and _switched(node.args[0]) is on
        ):
            out.add(node.func.value.attr)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _switched(node.value) is on:
            target = node.targets[0]
            if (
                isinstance(target, ast.Subscript)
                and (dotted_name(target.value) or "").endswith("environ")
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
                and ENV_NAME_RE.match(target.slice.value)
            ):
                out.add(target.slice.value)
    return out


def _switched(node: ast.expr) -> bool | None:
    """What a literal set into a variable turns it: on (True), off (False), or neither (None)."""
    if not isinstance(node, ast.Constant):
        return None
    value = node.value
    if isinstance(value, str):
        word = value.strip().lower()
        return (
            True
            if word in ("1", "true", "yes", "on")
            else False
            if word in ("0", "false", "no", "off")
            else None
        )
    if isinstance(value, bool) or type(value) is int:
        return bool(value)
    return None


def _returned_words(tree: ast.Module) -> set[str]:
    """One-word strings a function returns (``return "fa3"``, ``return "a" if x else "b"``): the
    values a helper that picks a setting may hand back."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Return) and node.value is not None):
            continue
        values = [node.value]
        while values:
            value = values.pop()
            if isinstance(value, ast.IfExp):
                values.extend((value.body, value.orelse))
            elif (
                isinstance(value, ast.Constant) and isinstance(value.value, str) and _WORD.match(value.value)
            ):
                out.add(value.value)
    return out


def _picked(
    assigned: Mapping[str, set[str]], returned: set[str], flags: Mapping[str, FlagInfo]
) -> dict[str, tuple[str, ...]]:
    """flag -> its declared choices the launch code may set it to itself.

    For a flag with a default, the choices assigned to it, other than the default. For a valued
    flag left unset by default (the launch code picks its value), also every choice some function
    of the launch code returns: when the launch code is seen picking some values, one it never
    picks is reached only by giving it."""
    out: dict[str, tuple[str, ...]] = {}
    for dest, info in sorted(flags.items()):
        if info.is_bool or not info.choices or info.is_list:
            continue
        given = assigned.get(dest, set())
        if info.default:
            found = tuple(sorted(v for v in given if v in info.choices and v != info.default))
            if found:
                out[info.flag] = found
        elif not info.optional:
            found = tuple(sorted(v for v in given | returned if v in info.choices))
            if found:
                out[info.flag] = found
    return out


def _count_mentions(tree: ast.Module, mentions: dict[str, dict[str, int]]) -> None:
    """Add each ``x.dest == "value"`` / ``x.dest = "value"`` (any names, one-word strings)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare | ast.Assign):
            continue
        names: set[str] = set()
        words: list[str] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute):
                names.add(sub.attr)
            elif isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _WORD.match(sub.value):
                words.append(sub.value)
        for name in names:
            for word in words:
                by_value = mentions.setdefault(name, {})
                by_value[word] = by_value.get(word, 0) + 1
