"""Fixes a user can act on: concrete flag values and env settings computed from the deciding
condition, checked against the survivors of earlier checks on the same flag (so following a fix
does not trip the check above it), and the message's own advice.

A value is written as the fixed command line would hold it: ``None`` for a flag left out (or an
env var unset), ``True`` for a switch given, a string for a value.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractor.prose.constraints import FLIP, Constraint, constraint_of
from extractor.prose.knowledge import EnvInfo, FlagInfo
from extractor.prose.reads import ReadContext
from extractor.prose.sentences import split_sentences

__all__ = [
    "OtherCheck",
    "Setting",
    "advice_sentences",
    "companions",
    "fixed_settings",
    "holds",
    "render_setting",
    "together_words",
]

Value = str | bool | None

_ADVICE_RE = re.compile(
    r"(?<![\w-])(try|please|use|set|consider|increase|decrease|reduce|lower|raise|disable|enable|specify|"
    r"pass|add|remove|install|upgrade|switch|make sure|must be|should be)(?![\w-])",
    re.I,
)


@dataclass(frozen=True)
class Setting:
    """One flag or env var and the value the fixed launch gives it."""

    constraint: Constraint
    value: Value
    default: str = ""
    """For an unset environment variable: the declared default it then reads as."""


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _fmt(x: float, like: str) -> str:
    return repr(x) if ("." in like or "e" in like.lower()) else str(int(x))


def _truthy(value: Value) -> bool:
    return value not in (None, False, "", "0", "false", "False")


def holds(c: Constraint, value: Value) -> bool | None:
    """Whether ``c`` holds for ``value`` (``None`` when it cannot be told)."""
    v0 = c.values[0] if c.values else ""
    if c.op == "truthy":
        return _truthy(value)
    if c.op == "falsy":
        return not _truthy(value)
    if c.op == "is-none":
        return value is None
    if c.op == "not-none":
        return value is not None
    if isinstance(value, bool) or value is None:
        word = {True: "True", False: "False", None: "None"}[value]
        if c.op in ("eq", "ne") and v0 in ("True", "False", "None"):
            return (word == v0) == (c.op == "eq")
        return None
    if c.op in ("eq", "ne"):
        return (value == v0) == (c.op == "eq")
    if c.op in ("in", "not-in"):
        return (value in c.values) == (c.op == "in")
    a, b = _num(value), _num(v0)
    if a is None or b is None:
        return None
    if c.op in ("not-multiple", "multiple"):
        return (a % b != 0) == (c.op == "not-multiple") if b else None
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}.get(c.op)


def holds_under(
    expr: ast.expr, ctx: ReadContext, values: dict[str, str | bool | None], depth: int = 0
) -> bool | None:
    """Whether ``expr`` holds when the flags in ``values`` have those values (``None``: the
    flag left out); ``None`` when it depends on anything else."""
    if depth > 30:
        return None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = holds_under(expr.operand, ctx, values, depth + 1)
        return None if inner is None else not inner
    if isinstance(expr, ast.BoolOp):
        parts = [holds_under(v, ctx, values, depth + 1) for v in expr.values]
        if isinstance(expr.op, ast.And):
            if any(p is False for p in parts):
                return False
            return True if all(p is True for p in parts) else None
        if any(p is True for p in parts):
            return True
        return False if all(p is False for p in parts) else None
    c = constraint_of(expr, ctx)
    if c is None or c.name not in values:
        return None
    return holds(c, values[c.name])


def _some_choices(choices: Sequence[str]) -> list[Value]:
    """A flag that must be given some value: its first declared choices, else a placeholder."""
    named: list[Value] = []
    named.extend(v for v in choices if v.lower() not in ("none", "null", ""))
    return named[:2] or ["<value>"]


def _candidates(c: Constraint, choices: Sequence[str], is_bool: bool) -> list[Value]:
    """Values that make ``c`` false, best first."""
    v0 = c.values[0] if c.values else ""
    op = c.op
    if op in ("indivisible", "divides"):
        # Which values divide ``x`` depends on the model: no one value to name.
        return []
    if op == "not-multiple":
        # ``page_size % 16 != 0`` fails: the literal itself is the smallest value that passes.
        return [v0]
    if op == "multiple":
        return []
    if op == "truthy":
        return [None]
    if op == "falsy":
        # A valued flag left empty (``not args.model_path``) is fixed by giving it one.
        if is_bool or c.kind == "env":
            return [True]
        valued = c.info is not None and (c.info.optional or c.info.is_list or bool(c.info.choices))
        return _some_choices(choices) if valued else []
    if op == "not-none":
        return [None]
    if op == "is-none":
        return _some_choices(choices)
    if op == "not-in":
        return [v for v in c.values if v != "None"]
    if op == "ne":
        if v0 == "True":
            return [True]
        if v0 in ("False", "None"):
            return [None]
        return [v0]
    if op in ("in", "eq"):
        if v0 == "True":
            return [None]
        if v0 in ("False", "None"):
            return [True] if is_bool else []
        low = {x.lower() for x in c.values}
        others: list[Value] = [x for x in choices[:32] if x.lower() not in low]
        others = others[:3]
        n = _num(v0)
        if not others and n is not None and op == "eq":
            others = [_fmt(n + 1, v0)]
        return others
    n = _num(v0)
    if n is None:
        return []
    pick = {"lt": n, "le": n + 1, "gt": n, "ge": n - 1}[op]
    return [_fmt(pick, v0)]


def fixed_settings(
    deciding: Sequence[Constraint], survivors: Sequence[Constraint], envs: dict[str, EnvInfo]
) -> list[list[Setting]]:
    """For each flag/env the deciding condition constrains, the settings that avoid the site and
    keep every survivor constraint on the same name true. Constraints on one name that only
    together decide (an ``elif`` chain of ``!=``) are pooled: any accepted value fixes it."""
    by_name: dict[str, list[Constraint]] = {}
    for c in deciding:
        by_name.setdefault(c.name, []).append(c)
    out: list[list[Setting]] = []
    for name, cs in by_name.items():
        keep = [s for s in survivors if s.name == name]
        unset = passing_default(cs, envs.get(name), keep)
        # Unset, the variable reads as its declared default, which passes: the way back to what
        # sglang ships comes first. The other values a list of choices accepts stay beside it; a
        # bound's edge (``x > 64``: 64) is no value anyone picks.
        options: list[Setting] = [Setting(cs[0], None, unset)] if unset is not None else []
        if unset is not None and not all(c.op in ("in", "not-in", "eq", "ne") for c in cs):
            out.append(options)
            continue
        for c in cs:
            info = c.info
            is_bool = bool(info and info.is_bool)
            env = envs.get(name)
            if c.kind == "env" and env is not None and env.kind.startswith("bool"):
                is_bool = True
            for value in _candidates(c, info.choices if info else (), is_bool):
                if c.kind == "env" and value is True:
                    value = "1"
                if c.kind == "env" and value is None and env is not None and env.kind.startswith("bool"):
                    # Unsetting a bool variable restores its default, which may be the failing one.
                    if env.default.strip() == "True" and c.op == "falsy":
                        value = None
                    elif env.default.strip() == "True":
                        value = "0"
                if any(holds(s, value) is False for s in keep):
                    continue
                if _undeclared(value, info):
                    continue
                if any(holds(o, value) is False for o in cs if o is not c and o.op not in ("ne", "not-in")):
                    continue
                options.append(Setting(c, value))
        if options:
            kept = list({(s.constraint.name, str(s.value)): s for s in options}.values())
            default = cs[0].info.default if cs[0].kind == "flag" and cs[0].info is not None else ""
            # The flag's own default, when it passes, is the value to show first: a launch that
            # leaves the flag out gets it.
            kept.sort(key=lambda s: not (default and s.value == default))
            out.append(kept)
    return out


def passing_default(cs: Sequence[Constraint], env: EnvInfo | None, keep: Sequence[Constraint]) -> str | None:
    """The declared default of a valued environment variable (not a switch: unsetting one of
    those is handled with its kind) when it makes every deciding test on it false and keeps the
    survivors true."""
    if env is None or env.kind.startswith("bool") or any(c.kind != "env" for c in cs):
        return None
    if any(c.op in ("is-none", "not-none") for c in cs):
        # Whether the variable is set at all (``"X" not in os.environ``): a default the registry
        # gives its own readers never makes it set.
        return None
    default = env.default.strip().strip("'\"")
    if not default or default == "None":
        return None
    if all(holds(c, default) is False for c in cs) and not any(holds(s, default) is False for s in keep):
        return default
    return None


def _undeclared(value: Value, info: FlagInfo | None) -> bool:
    """A value the flag's declared choices do not offer (the parser would reject it)."""
    if info is None or not info.choices or not isinstance(value, str) or value.startswith("<"):
        return False
    return value.lower() not in {c.lower() for c in info.choices}


def render_setting(s: Setting) -> list[str]:
    """Command-line words (flag) or one ``NAME=value`` word (env) for the fixed launch."""
    c = s.constraint
    if c.kind == "env":
        return [] if s.value is None else [f"{c.name}={s.value}"]
    if s.value is None:
        return [c.info.off_flag] if c.info is not None and c.info.off_flag else []
    if s.value is True:
        return [c.name] if (c.info is None or c.info.is_bool) else [c.name, "true"]
    return [c.name, str(s.value)]


def failing_words(c: Constraint) -> list[str]:
    """Words of a launch that makes ``c`` hold (the ``before`` command)."""
    info = c.info
    is_bool = bool(info and info.is_bool)
    v0 = c.values[0] if c.values else ""
    op = c.op
    if c.kind == "env":
        if op == "truthy":
            return [f"{c.name}=1"]
        if op in ("falsy", "is-none"):
            return [f"{c.name}=0"] if op == "falsy" else []
        if op in ("eq", "in") and v0 not in ("None", "False", "True"):
            return [f"{c.name}={v0}"]
        if op in ("lt", "le", "gt", "ge") and _num(v0) is not None:
            n = _num(v0) or 0.0
            return [f"{c.name}={_fmt({'lt': n - 1, 'le': n, 'gt': n + 1, 'ge': n}[op], v0)}"]
        return [f"{c.name}=<value>"]
    if op == "truthy" or (op == "eq" and v0 == "True") or (op == "ne" and v0 in ("False", "None")):
        return [c.name] if is_bool else [c.name, "<value>"]
    if op in ("falsy", "is-none") or (op == "eq" and v0 in ("False", "None")):
        # Off, a switch that leaving out does not turn off is given its ``--no-x``.
        off = info.off_flag if info is not None and (op == "falsy" or v0 == "False") else ""
        return [off] if off else []
    if op == "not-none":
        return [c.name] if is_bool else [c.name, "<value>"]
    if op in ("indivisible", "divides", "not-multiple", "multiple"):
        return [c.name, "<value>"]
    if op in ("eq", "in") and v0:
        return [c.name, v0]
    if op in ("ne", "not-in"):
        low = {x.lower() for x in c.values}
        other = [x for x in (info.choices if info else ()) if x.lower() not in low]
        n0 = _num(v0)
        if not other and op == "ne" and n0 is not None:
            other = [_fmt(n0 + 1, v0)]
        return [c.name, other[0] if other else "<unsupported-value>"]
    m = _num(v0)
    if m is not None:
        n = m
        return [c.name, _fmt({"lt": n - 1, "le": n, "gt": n + 1, "ge": n}[op], v0)]
    return [c.name, "<value>"]


def failing_group(cs: Sequence[Constraint]) -> list[str]:
    """Words of a launch that makes every constraint of ``cs`` (all on one flag or env var) hold:
    an ``elif`` chain of ``!=`` fails only for a value none of its branches handles."""
    if len(cs) < 2:
        return failing_words(cs[0]) if cs else []
    c = cs[0]
    pool = [*(c.info.choices if c.info else ()), *(v for x in cs for v in x.values)]
    # ``x != 0`` after ``x > 0`` returned: a number next to a bound the tests name (``-1``).
    pool += [
        _fmt(n + step, v)
        for x in cs
        for v in x.values
        if x.op in ("lt", "le", "gt", "ge", "ne") and (n := _num(v)) is not None
        for step in (1, -1)
    ]
    for value in dict.fromkeys(pool):
        if value not in ("None", "True", "False") and all(holds(x, value) is True for x in cs):
            return [f"{c.name}={value}"] if c.kind == "env" else [c.name, value]
    if all(x.op in ("ne", "not-in") for x in cs):
        return [f"{c.name}=<unsupported-value>"] if c.kind == "env" else [c.name, "<unsupported-value>"]
    return failing_words(c)


def failing_launch(cs: Sequence[Constraint], path: Sequence[Constraint] = ()) -> list[str]:
    """:func:`failing_group` for each name ``cs`` constrains, in order, each group kept inside
    what the earlier tests on the ``path`` say of that name."""
    by_name: dict[str, list[Constraint]] = {}
    for c in cs:
        by_name.setdefault(c.name, []).append(c)
    return [
        w
        for name, group in by_name.items()
        for w in failing_group([*group, *(p for p in path if p.name == name)])
    ]


def setting_words(options: Sequence[Setting]) -> str:
    """One solution sentence for the settings that fix one flag or env var."""
    c = options[0].constraint
    name = f"`{c.name}`"
    values = [s.value for s in options]
    if c.op == "not-multiple" and values and isinstance(values[0], str):
        # Any multiple passes: the literal is the example, not the one value.
        example = f"{c.name} {values[0]}" if c.kind == "flag" else f"{c.name}={values[0]}"
        return f"Set {name} to a multiple of {values[0]} (for example `{example}`)"
    if c.kind == "flag":
        if values == [None]:
            if c.op == "not-none":
                return f"Leave {name} out of the launch command so its default applies"
            if c.info is not None and c.info.off_flag:
                # Left out, the switch is on by default or by what the launch detects.
                return f"Launch with `{c.info.off_flag}`"
            return f"Launch without {name}"
        if values == [True]:
            return f"Add {name} to the launch command"
        shown = [str(v) for v in values if isinstance(v, str)]
        if len(shown) == 1:
            return f"Launch with `{c.name} {shown[0]}`"
        its = ", its default" if c.info is not None and c.info.default == shown[0] else ""
        return f"Set {name} to one of {', '.join(shown)} (for example `{c.name} {shown[0]}`{its})"
    if values[0] is None and options[0].default:
        head = f"Unset `{c.name}`: its default ({options[0].default}) passes this check"
        others = [str(v) for v in values[1:] if isinstance(v, str) and v != options[0].default]
        if len(others) == 1:
            return f"{head}; or set `{c.name}={others[0]}`"
        return f"{head}; or set it to one of {', '.join(others)}" if others else head
    if values == [None]:
        return f"Unset the environment variable {name}"
    shown = [str(v) for v in values if isinstance(v, str)]
    if c.op == "is-none" and shown == ["<value>"]:
        # ``"SGLANG_X" not in os.environ``: the check asks only that it is set; what the code then
        # does with the value (a path it opens, a number) asks for the right one.
        return (
            f"Set the environment variable {name} to the value the code should use: this check fails "
            f"because it is unset (e.g. `{c.name}=<value>`)"
        )
    if len(shown) == 1:
        return f"Set the environment variable `{c.name}={shown[0]}`"
    return f"Set the environment variable {name} to one of {', '.join(shown)} (for example `{c.name}={shown[0]}`)"


def flip_words(c: Constraint) -> str:
    """``c`` reversed, in words (used when no concrete value is known)."""
    return FLIP.get(c.op, c.op)


def advice_sentences(message: str) -> list[str]:
    """Sentences of the message that tell the user what to do ("try reducing --x")."""
    out = []
    # A line is a sentence of its own, and so is each item of a numbered list ("1. set --x").
    items = (" ".join(p.split()) for p in _LIST_ITEM_RE.split(message))
    for sentence in (x for item in items for x in split_sentences(item, semicolons=True)):
        s = sentence.strip()
        if len(s) < 8 or ("{" in s and "}" in s and s.count("{") > 2):
            continue
        imperative = re.match(
            r"(please |try |use |set |consider |install |upgrade |switch |disable |enable |specify |pass |add |remove |increase |reduce |lower |decrease |point )",
            s,
            re.I,
        )
        if _FOR_MAINTAINERS_RE.search(s):
            continue
        if imperative or ("--" in s and _ADVICE_RE.search(s)):
            out.append(s.rstrip(".") + ".")
    return out[:3]


# "Add a device branch here when one lands": a note to whoever edits the code, not to its user.
_FOR_MAINTAINERS_RE = re.compile(
    r"^(?:add|implement|extend|register)\b.*\b(?:here|in this (?:function|file|class|module|method))\b"
    r"|\bwhen (?:one|it|support) lands\b|\b(?:TODO|FIXME)\b",
    re.I,
)


_LIST_ITEM_RE = re.compile(r"\n\s*(?:\d{1,2}[.)]\s+)?|^\s*\d{1,2}[.)]\s+")


@dataclass(frozen=True)
class OtherCheck:
    """Another raise of the same function: its guard atoms (as they lead to it) and the
    constraints each puts on a flag, read in its own context."""

    line: int
    atoms: tuple[ast.expr, ...]
    constraints: tuple[tuple[Constraint, ...], ...]
    ctx: ReadContext


def launch_values(gates: Sequence[Constraint]) -> dict[str, Value]:
    """The values a launch that reaches the site gives the flags its gates test for a value."""
    out: dict[str, Value] = {}
    for g in gates:
        if g.kind != "flag" or g.name in out:
            continue
        v0 = g.values[0] if g.values else ""
        if g.op == "truthy" or (g.op == "eq" and v0 == "True"):
            out[g.name] = True
        elif g.op in ("eq", "in") and v0 not in ("", "None", "False"):
            out[g.name] = v0
    return out


# More settings than this for one fix means it is not the fix the code has in mind.
_MAX_COMPANIONS = 2


def companions(
    setting: Setting,
    others: Sequence[OtherCheck],
    context: dict[str, Value] | None = None,
    survivors: Sequence[Constraint] = (),
) -> list[tuple[Setting, int]]:
    """Settings that keep ``setting`` from tripping another check of the function: a check the
    new value makes true on its own flag, and that a default launch reaches, still passes when
    one of its conditions on another flag is turned false (an explicit value first, where the
    code would choose one itself)."""
    c = setting.constraint
    if c.kind != "flag" or setting.value is None:
        return []  # leaving a flag out is the launch every default run makes
    values: dict[str, Value] = {**(context or {}), c.name: setting.value}
    unset: dict[str, Value] = {**(context or {}), c.name: None}
    out: list[tuple[Setting, int]] = []
    for other in others:
        mine = [holds_under(e, other.ctx, values) for e in other.atoms]
        if False in mine:
            continue
        # Only a check the new value turns on: an atom true with it and not without it.
        if not any(
            m is True and holds_under(e, other.ctx, unset) is not True
            for e, m in zip(other.atoms, mine, strict=True)
        ):
            continue
        rest = [cs for cs, m in zip(other.constraints, mine, strict=True) if m is None]
        if any(any(holds(x, None) is False for x in cs) for cs in rest):
            continue  # a default launch already skips that check
        gates = [x for cs in rest if len(cs) == 1 for x in cs if x.kind == "flag" and x.name != c.name]
        for g in sorted(gates, key=lambda g: 0 if g.op == "is-none" else 1):
            picks = _candidates(g, g.info.choices if g.info else (), bool(g.info and g.info.is_bool))
            # A companion must not undo an earlier check the site has already passed.
            picks = [
                p for p in picks if not any(x.name == g.name and holds(x, p) is False for x in survivors)
            ]
            if picks:
                out.append((Setting(g, picks[0]), other.line))
                break
    merged = list({s.constraint.name: (s, line) for s, line in out}.values())
    return merged if len(merged) <= _MAX_COMPANIONS else []


def together_words(sentence: str, extra: Sequence[tuple[Setting, int]]) -> str:
    """``sentence`` with the settings that must come with it (and the check each one avoids)."""
    words = " and ".join(f"`{' '.join(render_setting(s))}`" for s, _ in extra)
    lines = ", ".join(str(line) for _, line in extra)
    return (
        f"{sentence} together with {words} (without it the check at line {lines} of the same function trips)"
    )


# The ``before`` line of a fix whose failing value the command line refuses.
REFUSED_BEFORE = "# before (only from Python: the command line refuses this value)"


def refused_values(deciding: Sequence[Constraint]) -> list[FlagInfo]:
    """The flags whose failing value lies outside every choice they declare: argparse refuses it on
    the command line, so only Python code (``ServerArgs``, ``sglang.Engine``) can pass it."""
    out: list[FlagInfo] = []
    for name in dict.fromkeys(c.name for c in deciding if c.kind == "flag"):
        group = [c for c in deciding if c.name == name]
        info = group[0].info
        if info is not None and info.choices and "<unsupported-value>" in failing_group(group):
            out.append(info)
    return out


def refused_trigger(trigger: str, refused: Sequence[FlagInfo], own: frozenset[str]) -> str:
    """``trigger`` told that the failing value of the first ``refused`` flag cannot come from the
    command line: argparse refuses it, so only code (``ServerArgs``, ``sglang.Engine``, or for a
    script's own flag a caller of its functions) can pass one."""
    info = refused[0]
    said = trigger.replace(
        f"Launching with `{info.flag} <unsupported-value>`",
        f"A `{info.dest}` outside the choices of `{info.flag}`",
    )
    # A script's own flag is refused by its own parser: only code calling its functions passes one.
    who = (
        "only code that calls this script's functions itself"
        if info.flag in own
        else f"only Python code that sets `{info.dest}` on `ServerArgs` or `sglang.Engine`"
    )
    return f"{said} The command line refuses such a value (the choices are {', '.join(info.choices)}): {who} can pass one."
