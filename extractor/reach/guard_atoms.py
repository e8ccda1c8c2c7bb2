"""Guard tests read as atoms: the raw, knowledge-free shape of what may select code.

:class:`GuardReader` turns the test of an ``if`` (or a conditional expression, or an assigned
value a later test reads) into the atoms :mod:`extractor.reach.facts` describes: attribute reads of
possible flags, their comparisons with literals, value tests (``x.is_y()``), environment reads and
platform gates. It needs only the file's imports; which atoms are user choices is decided later.
"""

from __future__ import annotations

import ast
import re

from extractor.analysis.walk import getattr_read, last_name
from extractor.reach.facts import Atom
from extractor.reach.syntax import class_name

__all__ = [
    "ACCESSOR",
    "ENV_READERS",
    "NOT_VALUE",
    "SPECULATIVE_MODES",
    "TYPED",
    "VALUE_TEST",
    "GuardReader",
    "class_flag_name",
    "platform_word",
    "reader_default",
    "typed_params",
]

# ``is_hip()``, ``_is_npu``, ``_use_xpu``: the platform word is the suffix.
_PLATFORM_NAME = re.compile(r"^_?(?:is|use|on)_(hip|rocm|npu|xpu|cpu|cuda|musa|mps|hpu|mlu)(?:_runtime)?$")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
ENV_READERS = frozenset({"getenv", "get_bool_env_var", "get_int_env_var", "get_env_var", "environ.get"})
"""Functions that read the environment variable their first argument names."""
ACCESSOR = re.compile(r"^get_([a-z][a-z0-9_]*)$")
"""``get_moe_runner_backend``: the getter of the value flag ``moe_runner_backend`` set."""
NOT_VALUE = "I"
"""The kind of an atom ``(NOT_VALUE, subject, how, value)``: a value test (``x.is_y()``, an ``i``
atom) known to have failed where the guarded code runs."""
VALUE_TEST = re.compile(r"^is_([a-z0-9_]+)$")
"""``is_marlin``: a value test method of a flag's value (an enum member of its choices)."""
SPECULATIVE_MODES = frozenset({"target_verify", "draft_extend", "draft_extend_v2", "verify"})
"""Forward modes of a batch that only a speculative run makes (``forward_mode.is_target_verify()``)."""


# A test of a hardware feature only one platform has: Intel AMX and XMX are CPU and XPU units
# (``cpu_has_amx_support()``, ``_is_cpu_amx_available``, ``use_intel_amx_backend(layer)``).
_FEATURE_PLATFORM = {"amx": "cpu", "xmx": "xpu"}
_PLATFORM_FEATURE = re.compile(
    rf"^_?(?:is|use|has|{'|'.join(sorted(set(_FEATURE_PLATFORM.values())))})_(?:[a-z0-9]+_)*?"
    rf"({'|'.join(_FEATURE_PLATFORM)})(?:_[a-z0-9]+)*$"
)


def platform_word(node: ast.expr, features: bool = False) -> str | None:
    """The platform a gate on the running platform names (``is_hip()``, ``_is_npu``), or None.
    With ``features``, a test of a hardware feature of one platform (``cpu_has_amx_support()``)
    names it too: that test passing means that platform, failing does not mean another one."""
    with_args = isinstance(node, ast.Call) and bool(node.args or node.keywords)
    called = isinstance(node, ast.Call)
    if isinstance(node, ast.Call):
        node = node.func
    if not called and isinstance(node, ast.Attribute) and not node.attr.startswith("_"):
        # ``dst.is_cuda``: where a tensor lives (a ROCm GPU's tensors say ``is_cuda`` too), not
        # the platform the launch runs on (``is_cuda()``, ``_is_cuda``, ``self._is_hip``).
        return None
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    m = _PLATFORM_NAME.match(name)
    if m and not with_args:
        return m.group(1)
    # A feature test may take the layer it asks about (``use_intel_amx_backend(layer)``).
    feature = _PLATFORM_FEATURE.match(name) if features else None
    return _FEATURE_PLATFORM[feature.group(1)] if feature else None


# Only an args object holds flag values as given; a config's same-named field (``model_config.
# quantization``) may come from the checkpoint instead.
_ARGS_WORDS = re.compile(r"args")


class GuardReader:
    """Reads guard atoms in one file; ``module_subjects`` and ``module_aliases`` hold its module-level names."""

    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports
        self.module_aliases: dict[str, list[Atom]] = {}
        self.module_subjects: dict[str, tuple[str, str]] = {}

    def dotted(self, node: ast.expr) -> str:
        """Dotted text of a name or attribute chain with the file's imports applied; ``?`` parts unknown."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            head = self.imports.get(node.id, node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            head = "super()"
        else:
            head = "?"
        return ".".join([head, *reversed(parts)])

    # ----------------------------------------------------------------- module level

    def subject(self, node: ast.expr, local: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
        """``(name, receiver kind)`` of a value that may hold a user choice."""
        if isinstance(node, ast.Attribute):
            if _ENV_NAME.match(node.attr):
                return None
            recv = node.value
            if isinstance(recv, ast.Name) and recv.id == "self":
                return node.attr, "self"
            text = ast.unparse(recv) if isinstance(recv, ast.Call | ast.Attribute | ast.Name) else ""
            return node.attr, "args" if _ARGS_WORDS.search(text.lower()) else "other"
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            m = ACCESSOR.match(name)
            if m:
                return m.group(1), "args"
        if isinstance(node, ast.Name):
            found = local.get(node.id) or self.module_subjects.get(node.id)
            return found or (node.id, "name")
        return None

    def env(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Call):
            func = node.func
            name = self.dotted(func).split(".")
            tail = ".".join(name[-2:]) if len(name) >= 2 and name[-2] == "environ" else name[-1]
            if tail in ENV_READERS and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    return arg.value
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("get", "is_set")
                and isinstance(func.value, ast.Attribute)
            ):
                node = func.value
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("value",)
            and isinstance(node.value, ast.Attribute)
        ):
            node = node.value
        if (
            isinstance(node, ast.Attribute)
            and _ENV_NAME.match(node.attr)
            and node.attr.startswith(("SGL", "SGLANG"))
        ):
            return node.attr
        if isinstance(node, ast.Subscript) and self.dotted(node.value).endswith("environ"):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return key.value
        return None

    def platform(self, node: ast.expr) -> str | None:
        return platform_word(node, features=True)

    def atoms_of(
        self, node: ast.expr, local: dict[str, tuple[str, str]], aliases: dict[str, list[Atom]]
    ) -> list[Atom]:
        """The atoms every way through ``node`` being true implies (its ``and`` conjuncts)."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "bool"
            and len(node.args) == 1
            and not node.keywords
        ):
            # ``bool(server_args.enable_multimodal)`` is true where its argument is.
            node = node.args[0]
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return [a for v in node.values for a in self.atoms_of(v, local, aliases)]
            return self._any_of(node.values, local, aliases)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            # ``not envs.SGLANG_DISABLE_X.get()``: the variable off (a kill switch left alone).
            env = self.env(node.operand)
            return [("e", env, "0")] if env is not None else []
        if isinstance(node, ast.UnaryOp | ast.Lambda):
            return []
        if isinstance(node, ast.NamedExpr):
            # ``if cfg := f(x):`` tests the value it binds.
            return self.atoms_of(node.value, local, aliases)
        env = self.env(node)
        if env is not None:
            # ``get_bool_env_var("TRTLLM_ENABLE_PDL", "1")``: true with the variable unset, so no
            # setting is needed. (sglang's own variables are read against its registry's defaults.)
            on = not env.startswith("SGL") and _reader_default(node).lower() in _TRUE_WORDS
            return [] if on else [("e", env)]
        platform = self.platform(node)
        if platform is not None:
            return [("p", platform)]
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node, local, aliases)
        m = (
            VALUE_TEST.match(node.func.attr)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            else None
        )
        if m and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            recv = node.func.value
            if m.group(1) in SPECULATIVE_MODES and last_name(recv) == "forward_mode":
                # A verify or draft-extend pass of the batch: runs only under speculative decoding.
                return [("m", "speculative")]
            out: list[Atom] = []
            subject = self.subject(recv, local)
            if subject is not None and subject[1] != "other":
                out.append(("i", subject[0], subject[1], m.group(1)))
            typed = local.get(f"{TYPED}{recv.id}") if isinstance(recv, ast.Name) else None
            if typed is not None and (subject is None or typed[0] != subject[0]):
                out.append(("i", typed[0], "enum", m.group(1)))
            return out
        read = _attribute_read(node)
        if read is not None:
            # ``getattr(self, "use_x", False)``: the attribute, false where it was never set.
            return self.atoms_of(read, local, aliases)
        classes = _isinstance_classes(node)
        if classes:
            # ``isinstance(pool, FooPool)``: true only where one of those classes was built.
            return [("v", "isinstance", "type", *classes)]
        called = self.called(node)
        if called is not None:
            return [("t", called)]
        if isinstance(node, ast.Name):
            found = aliases.get(node.id) or self.module_aliases.get(node.id)
            if found is not None:
                return list(found)
        if isinstance(node, ast.Name | ast.Attribute):
            subject = self.subject(node, local)
            if subject is not None:
                return [("a", *subject)]
        return []

    def negated_atoms(
        self, node: ast.expr, local: dict[str, tuple[str, str]], aliases: dict[str, list[Atom]]
    ) -> list[Atom]:
        """The atoms that hold when ``node`` is false, where that is sure: ``not x`` (``x``),
        ``x is None`` (``x`` set), ``x <= 1`` (``x`` set above its default), and an ``or`` of them."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return [a for v in node.values for a in self.negated_atoms(v, local, aliases)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = node.operand
            if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute):
                # ``not x.is_y()``: a value test, whose subject may be unset otherwise; but an
                # environment read (``not envs.SGLANG_X.get()``) failing means the variable is on.
                return [a for a in self.atoms_of(operand, local, aliases) if a[0] == "e"]
            return self.atoms_of(operand, local, aliases)
        env = self.env(node)
        if env is not None:
            # ``if envs.SGLANG_X.get(): ... else: <here>``: the variable turned off.
            return [("e", env, "0")]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            # ``if algo.is_frozen_kv_mtp(): return ...`` then ``if algo.is_eagle():``: the value
            # test failed, so the flag holds none of its values (read against a test of the same
            # flag on the same path: :data:`NOT_VALUE`).
            return [(NOT_VALUE, *a[1:]) for a in self.atoms_of(node, local, aliases) if a[0] == "i"]
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            return []
        op, right = node.ops[0], node.comparators[0]
        bound = right.value if isinstance(right, ast.Constant) else None
        unset = isinstance(op, ast.Is) and bound is None and isinstance(right, ast.Constant)
        small = (
            isinstance(bound, int)
            and not isinstance(bound, bool)
            and ((isinstance(op, ast.LtE) and bound >= 1) or (isinstance(op, ast.Lt) and bound >= 2))
        )
        if not (unset or small):
            return []
        called = self.called(node.left) if unset else None
        if called is not None:
            return [("t", called)]
        subject = self.subject(node.left, local)
        return [("a", *subject)] if subject is not None and subject[1] != "other" else []

    def called(self, node: ast.expr) -> str | None:
        """The dotted callee of a call whose value a test reads (``f(x)``, ``mod.f(x)``), if named."""
        if isinstance(node, ast.NamedExpr):
            node = node.value
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
            return None
        dotted = self.dotted(node.func)
        if dotted.startswith("self.") and dotted.count(".") == 1:
            return dotted  # a method of the caller's own class: resolved through its hierarchy
        return None if dotted.startswith(("?", "self.", "cls.", "super()")) else dotted

    def _any_of(
        self, values: list[ast.expr], local: dict[str, tuple[str, str]], aliases: dict[str, list[Atom]]
    ) -> list[Atom]:
        # ``x == "a" or x == "b"`` (or ``x.is_a() or x.is_b()``) still requires ``x`` to be one of
        # them; other ``or``s require nothing.
        merged: list[str] = []
        head: tuple[str, str, str] | None = None
        for value in values:
            atoms = self.atoms_of(value, local, aliases)
            if len(atoms) != 1 or atoms[0][0] not in ("v", "i"):
                return []
            here = (atoms[0][0], atoms[0][1], atoms[0][2])
            if head is not None and here != head:
                return []
            head = here
            merged.extend(atoms[0][3:])
        return [(*head, *merged)] if head else []

    def _compare(
        self, node: ast.Compare, local: dict[str, tuple[str, str]], aliases: dict[str, list[Atom]]
    ) -> list[Atom]:
        op, right, left = node.ops[0], node.comparators[0], node.left
        if isinstance(op, ast.IsNot | ast.NotEq) and isinstance(right, ast.Constant) and right.value is None:
            called = self.called(left)
            if called is not None:
                return [("t", called)]
            if (
                isinstance(left, ast.Attribute)
                and left.attr == "hip"
                and self.dotted(left).endswith("version.hip")
            ):
                return [("p", "hip")]
            subject = self.subject(left, local)
            return [("a", *subject)] if subject is not None else []
        if _above_off(op, right):
            # ``args.offload_group_size > 0``: a size whose unset value (0 or -1) turns the
            # feature off holds only when the user gave one.
            subject = self.subject(left, local)
            return [("a", *subject)] if subject is not None and subject[1] == "args" else []
        if not isinstance(op, ast.Eq | ast.In | ast.Is):
            return []
        env = self.env(left) if isinstance(op, ast.Eq | ast.In) else None
        if env is not None:
            # ``envs.SGLANG_X.get() == "triton"``: the variable set to one of those values.
            items = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else [right]
            strings = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
            if _reader_default(left) in strings:
                # ``os.environ.get("X", "all") == "all"``: an unset variable already reads as it.
                return []
            return [("e", env, *strings)] if strings and len(strings) == len(items) else []
        values = _literal_values(right)
        subject = self.subject(left, local)
        if values is None or subject is None:
            return []
        atoms: list[Atom] = [("v", subject[0], subject[1], *values)]
        enum = _enum_subject(right)
        if enum is not None and enum != subject[0]:
            atoms.append(("v", enum, "enum", *values))
        return atoms


def _above_off(op: ast.cmpop, right: ast.expr) -> bool:
    """``x > 0`` or ``x >= 1``: the test a size or count that is off when unset passes once given."""
    if not (isinstance(right, ast.Constant) and type(right.value) is int):
        return False
    return (isinstance(op, ast.Gt) and right.value == 0) or (isinstance(op, ast.GtE) and right.value == 1)


# Parameters annotated with a class are kept under this prefix in a function's subjects: only a
# value test (``backend.is_x()``) reads them, as a choice of the flag the class is named after.
TYPED = "\x00"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ENUM_SUFFIX = re.compile(r"_(?:enum|type|kind)$")


def _class_flag_name(name: str) -> str | None:
    """``MoeRunnerBackend`` -> ``moe_runner_backend``, ``AttentionBackendEnum`` -> ``attention_backend``."""
    if not name[:1].isupper() or "_" in name:
        return None
    return _ENUM_SUFFIX.sub("", _CAMEL.sub("_", name).lower())


class_flag_name = _class_flag_name


def _enum_subject(node: ast.expr) -> str | None:
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    names = {i.value.id for i in items if isinstance(i, ast.Attribute) and isinstance(i.value, ast.Name)}
    return _class_flag_name(names.pop()) if len(names) == 1 else None


def typed_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str, str]]:
    out = {}
    args = func.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        ann = arg.annotation
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            name = ann.value.rpartition(".")[2]
        elif isinstance(ann, ast.Name):
            name = ann.id
        elif isinstance(ann, ast.Attribute):
            name = ann.attr
        else:
            continue
        flag = _class_flag_name(name)
        if flag:
            out[f"{TYPED}{arg.arg}"] = (flag, "enum")
    return out


def _literal_values(node: ast.expr) -> list[str] | None:
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    out = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            out.append(item.value)
        elif isinstance(item, ast.Attribute) and item.attr.isupper():
            out.append(item.attr)  # an enum member: ``SpeculativeAlgorithm.EAGLE``
        else:
            return None
    return out or None


def _attribute_read(node: ast.expr) -> ast.Attribute | None:
    """``getattr(obj, "name")`` or ``getattr(obj, "name", <false constant>)`` as ``obj.name``."""
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) > 3:
        return None
    read = getattr_read(node)
    if read is None or not read.attr.isidentifier():
        return None
    if len(node.args) == 3:
        default = node.args[2]
        if not (isinstance(default, ast.Constant) and not default.value):
            return None
    return read


def _isinstance_classes(node: ast.expr) -> tuple[str, ...]:
    """The class names (last parts) of ``isinstance(x, C)`` or ``isinstance(x, (C, D))``; empty
    for any other test, or one naming something that is not a plain class name."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
    ):
        return ()
    kinds = node.args[1]
    items = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    names = [class_name(item) for item in items]
    return tuple(sorted(set(names))) if all(names) else ()


_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


def reader_default(node: ast.expr) -> str | int | float | bool | None:
    """The literal default an environment reader call gives an unset variable (``os.getenv("X",
    "1")``, ``get_int_env_var("X", 128)``, ``get_bool_env_var("X", default="true")``); None when
    it names none or it is no literal."""
    if not isinstance(node, ast.Call):
        return None
    value = (
        node.args[1]
        if len(node.args) > 1
        else next((k.value for k in node.keywords if k.arg == "default"), None)
    )
    if isinstance(value, ast.Constant) and isinstance(value.value, str | int | float):
        return value.value
    return None


def _reader_default(node: ast.expr) -> str:
    """:func:`reader_default` as text, ``""`` when there is none."""
    value = reader_default(node)
    return "" if value is None else str(value)
