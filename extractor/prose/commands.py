"""Code for ``exampleFix``: before/after launch command lines and before/after calls."""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractor.analysis.facts import Site
from extractor.prose.constraints import FLIP, AtomView, Constraint, best_constraints
from extractor.prose.declarations import SUBCOMMAND_RE, subcommand_of
from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.prose.reads import Reads
from extractor.prose.wording import constraint_words, snake


def launcher(site: Site, knowledge: Knowledge, script: bool = False) -> str:
    """The command a fix is written against: the server for its flags, or with ``script`` the
    site's own file run as a module (a tool that parses its own command line)."""
    if SUBCOMMAND_RE.search(site.path):
        # The subcommand's own parser is what the module's flags are read by.
        return launcher_of_path(site.path)
    if script:
        return f"python -m {script_module(site.path)}"
    return launcher_of_path(knowledge.namespace_of(site.path) or site.path)


def launcher_of_path(path: str) -> str:
    """The command that starts the server whose code lives under ``path`` (or, for a module of
    one of the ``sglang`` command's subcommands, that subcommand)."""
    sub = subcommand_of(path)
    if sub is not None:
        return f"sglang {sub} --model-path <model>"
    if "multimodal_gen" in path:
        return "sglang serve --model-path <model>"
    return "python -m sglang.launch_server --model-path <model>"


def script_module(path: str) -> str:
    """``python/sglang/tools/x.py`` -> ``sglang.tools.x`` (a package's ``__main__`` -> the package)."""
    parts = path.removesuffix(".py").split("/")
    if "python" in parts:
        parts = parts[parts.index("python") + 1 :]
    if parts and parts[-1] == "__main__":
        parts = parts[:-1]
    return ".".join(parts)


def other_choice(info: FlagInfo | None, rejected: Sequence[str]) -> str | None:
    if info is None:
        return None
    low = {r.lower() for r in rejected}
    for c in info.choices:
        if c.lower() not in low:
            return c
    return None


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _fmt_num(x: float, like: str) -> str:
    if "." in like or "e" in like.lower():
        return repr(x)
    return str(int(x))


def flag_args(c: Constraint, before: bool) -> list[str] | None:
    """Command-line words for flag ``c`` in the failing (``before``) or fixed command; ``[]``
    drops the flag, ``None`` means "no concrete words known"."""
    info = c.info
    is_bool = bool(info and info.is_bool)
    flag = c.name
    op = c.op if before else FLIP[c.op]
    if op == "truthy":
        return [flag] if is_bool else [flag, "<value>"]
    off = info.off_flag if info is not None else ""
    if op in ("falsy", "is-none"):
        # A switch that leaving out does not turn off is turned off by its ``--no-x``.
        return [off] if off and op == "falsy" else []
    if op == "not-none":
        return [flag] if is_bool else [flag, "<value>"]
    if op == "in":
        return [flag, c.values[0]] if c.values else None
    if op == "not-in":
        other = other_choice(info, c.values)
        return [flag, other] if other else [flag, "<other-value>"]
    if op == "eq":
        v = c.values[0] if c.values else None
        if v in ("True",):
            return [flag] if is_bool else [flag, "true"]
        if v in ("False", "None"):
            return [off] if off and v == "False" else []
        return [flag, v] if v is not None else None
    if op == "ne":
        v = c.values[0] if c.values else ""
        if v in ("True",):
            return []
        if v in ("False", "None"):
            return [flag] if is_bool else [flag, "<value>"]
        other = other_choice(info, c.values)
        return [flag, other] if other else [flag, "<other-value>"]
    if op in ("lt", "le", "gt", "ge") and c.values:
        n = _num(c.values[0])
        if n is None:
            return None
        pick = {"lt": n - 1, "le": n, "gt": n + 1, "ge": n}[op]
        return [flag, _fmt_num(pick, c.values[0])]
    return None


def env_assign(c: Constraint, before: bool) -> str | None:
    op = c.op if before else FLIP[c.op]
    if op == "truthy":
        return f"{c.name}=1"
    if op in ("falsy", "is-none"):
        return ""
    if op == "not-none":
        return f"{c.name}=<value>"
    if op in ("in", "eq") and c.values and c.values[0] not in ("None", "False"):
        return f"{c.name}={c.values[0]}"
    if op in ("in", "eq"):
        return ""
    if op in ("not-in", "ne"):
        return f"{c.name}=<other-value>"
    if op in ("lt", "le", "gt", "ge") and c.values:
        n = _num(c.values[0])
        if n is None:
            return None
        pick = {"lt": n - 1, "le": n, "gt": n + 1, "ge": n}[op]
        return f"{c.name}={_fmt_num(pick, c.values[0])}"
    return None


def command_fix(site: Site, knowledge: Knowledge, views: list[AtomView], total: Reads) -> str | None:
    """Before/after command lines, changing one user-controlled value (the first one whose
    change is known) and keeping the others that trigger the error."""
    all_constraints = [c for v in views for c in v.constraints]
    if not all_constraints:
        return None
    constraints = best_constraints(views)
    base = launcher(site, knowledge)
    before_flags: list[str] = []
    before_env: list[str] = []
    after_flags: list[str] = []
    after_env: list[str] = []
    changed = False
    # Change a boolean switch first (dropping a switch is the least invasive fix, as in the
    # reference record); otherwise the first constraint.
    order = sorted(
        range(len(constraints)),
        key=lambda i: (0 if constraints[i].kind == "flag" and constraints[i].op == "truthy" else 1, i),
    )
    fix_index = None
    for i in order:
        c = constraints[i]
        if c.kind == "flag":
            b, a = flag_args(c, True), flag_args(c, False)
        else:
            eb, ea = env_assign(c, True), env_assign(c, False)
            b = [eb] if eb else ([] if eb == "" else None)
            a = [ea] if ea else ([] if ea == "" else None)
        if b is not None and a is not None and b != a:
            fix_index = i
            break
    if fix_index is None:
        return None
    for i, c in enumerate(constraints):
        if c.kind == "flag":
            b = flag_args(c, True) or []
            a = (flag_args(c, False) or []) if i == fix_index else b
            before_flags += b
            after_flags += a
        else:
            eb = env_assign(c, True) or ""
            ea = (env_assign(c, False) or "") if i == fix_index else eb
            if eb:
                before_env.append(eb)
            if ea:
                after_env.append(ea)
        changed = changed or i == fix_index

    def line(env: list[str], flags: list[str]) -> str:
        return " ".join([*env, base, *flags])

    before = line(before_env, before_flags)
    after = line(after_env, after_flags)
    if not changed or before == after:
        return None
    needs = "; ".join(constraint_words(c).replace("`", "") for c in all_constraints)
    others = [v.simple for v in views if not v.constraints and v.atom.kind != "except"]
    if others:
        needs += "; and " + "; ".join(others[:2])
    return f"# fails when {needs}\n# before\n{before}\n# after\n{after}"


VALIDATOR_WRAPPED = frozenset({"ValueError", "AssertionError"})
"""What pydantic turns into a ``ValidationError`` when a validator raises it (others pass through)."""


def call_of(site: Site) -> str:
    """How a caller reaches the site, as one line of code: building its class, for a pydantic
    validator (which runs as the model is built)."""
    if site.validates is not None and site.in_class:
        return f"{site.in_class}(...)"
    if site.qualname in ("", "<module>"):
        return f"import {_module_name(site.path)}"
    name = site.qualname.replace(".<locals>.", ".")
    if site.in_class and "." in name:
        cls, _, meth = name.rpartition(".")
        cls = cls.rsplit(".", 1)[-1]
        if meth == "__init__":
            return f"{cls}(...)"
        return f"{snake(cls) or 'obj'}.{meth}(...)"
    return f"{name}(...)"


def _module_name(path: str) -> str:
    """The import name of a file: ``python/sglang/srt/x.py`` -> ``sglang.srt.x``,
    ``sgl-kernel/python/sgl_kernel/y.py`` -> ``sgl_kernel.y``."""
    rel = path.rsplit("python/", 1)[-1] if "python/" in path else path
    rel = rel.removesuffix(".py").removesuffix("/__init__")
    parts = [p for p in rel.split("/") if p]
    if parts and all(p.isidentifier() for p in parts):
        return ".".join(parts)
    return "_".join(re.sub(r"\W", "_", p) for p in parts) or "module"


_OVERRIDE_RE = re.compile(r"subclass|overrid|implement|abstract|must define|should define", re.I)


def _meant_to_override(site: Site) -> bool:
    """Whether a method that always raises ``NotImplementedError`` is a hook for subclasses to fill
    (no message, or one that asks for an override), not a path a concrete class leaves out on
    purpose ("only supports prefill"), where a subclass is no fix."""
    template = site.message.template if site.message is not None else ""
    return not template.strip() or bool(_OVERRIDE_RE.search(template[:400]))


def private_owner(site: Site) -> bool:
    """Whether the site is a method of a private class (``_BaseOffloader``): sglang's own business,
    which no code of the user's derives from."""
    return (site.in_class or "").split(".")[-1].startswith("_")


def overridable_hook(site: Site) -> tuple[str, str] | None:
    """``(class, method)`` of a method that always raises ``NotImplementedError`` as a hook for
    subclasses to fill, in a public class one may derive from; None otherwise."""
    if not (site.error_class.endswith("NotImplementedError") and site.in_class and _meant_to_override(site)):
        return None
    if private_owner(site):
        return None
    return site.in_class.split(".")[-1], site.qualname.rsplit(".", 1)[-1]


def code_fix(site: Site, views: list[AtomView]) -> str:
    call = call_of(site)
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    if not plain:
        if site.guard.handlers:
            h = ", ".join(site.guard.handlers)
            short = site.error_class.rsplit(".", 1)[-1]
            return (
                f"# before: a {h} inside {site.qualname} surfaces as {short}\n{call}\n"
                f"# after: catch it and look at the original error, chained as __cause__\n"
                f"try:\n    {call}\nexcept {short} as e:\n"
                f"    cause = e.__cause__  # the original {h}\n"
                f"    ...  # fix what `cause` points at (input, file or config), then retry"
            )
        hook = overridable_hook(site)
        if hook is not None:
            base, meth = hook
            return (
                f"# before: {site.qualname} is not implemented here\n{call}\n"
                f"# after: use a subclass that overrides {meth}\n"
                f"class My{base}({base}):\n"
                f"    def {meth}(self, *args, **kwargs):\n        ..."
            )
        return f"# before: {call} always raises {site.error_class} here\n{call}\n# after: avoid this call path (see solutions)"
    # The site needs every atom; making the innermost one false is enough, and it is usually
    # the actual check (the outer ones select the branch it sits in).
    last = plain[-1]
    context = " and ".join(f"`{v.simple}`" for v in plain[:-1][:3])
    when = f" (with {context})" if context else ""
    short = site.error_class.rsplit(".", 1)[-1]
    return (
        f"# before: {call} raises {short} when `{last.simple}`{when}\n{call}\n"
        f"# after: make sure `{last.neg}` holds first\n"
        f"if {last.neg}:\n    {call}\nelse:\n    ...  # handle the rejected input here"
    )
