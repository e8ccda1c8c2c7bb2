"""A check on a parameter or ``self`` attribute that a flag fills through the callers.

``if io_backend == ...: raise`` reads no flag in its own function, so a file's analysis calls it
internal. When the deciding condition constrains such a value, :func:`pending_spec` keeps the
constraints (and what the prose needs to say them) beside the record; once the run's
whole-target index has resolved the value to the flags its callers pass
(:class:`extractor.reach.arguments.PassedFlags`), :func:`with_passed` rewrites the record as a
flag cause: the cause sentence, the trigger, a concrete value that passes the check (kept clear of
the earlier checks of the function on the same value) and a before/after launch. When the callers
fill the value from the model's config instead (``Layer(n=config.ngram_n)``), :func:`with_passed_config`
names the config.json keys and a checkpoint fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from extractor.analysis.facts import GuardAtom, Site
from extractor.prose.advice import INTERNAL_CHECK, KIND_WORDS, LIMIT_CAUSE, condition_code, negated_code
from extractor.prose.cause import Cause, Roles, str_tested
from extractor.prose.classify import classify
from extractor.prose.commands import launcher_of_path
from extractor.prose.constraints import (
    AtomView,
    Constraint,
    divisor_test,
    passed_constraints,
    simplify,
    unparse,
)
from extractor.prose.fixes import (
    REFUSED_BEFORE,
    Setting,
    advice_sentences,
    failing_launch,
    fixed_settings,
    passing_default,
    refused_trigger,
    refused_values,
    render_setting,
    setting_words,
)
from extractor.prose.knowledge import EnvInfo, FlagInfo
from extractor.prose.origins import data_param
from extractor.prose.reads import ReadContext
from extractor.prose.why import scope_name
from extractor.prose.wording import or_list
from extractor.prose.world_size import size_flags
from extractor.reach.arguments import CONFIG_SOURCE, ENV_SOURCE, REQUEST_SOURCE

if TYPE_CHECKING:
    from extractor.reach import SiteReach

__all__ = [
    "INTERNAL_CAUSE",
    "PASSED_KEY",
    "data_spec",
    "flag_from_plain",
    "flag_plain",
    "in_place_of_the_report",
    "internal_sentence",
    "passed_table",
    "pending_spec",
    "split_spec",
    "with_data_flag",
    "with_flag_text",
    "with_passed",
    "with_passed_config",
    "with_passed_env",
    "with_split_config",
]

PASSED_KEY = "_passed"
"""The partial record's key for the pending spec (dropped before the record is built)."""

_MAX_CONFIG_KEYS = 2
INTERNAL_CAUSE = "Cause: an internal invariant, not a setting the user controls; reaching it is a bug."


def internal_sentence(documentation: object) -> str | None:
    """The sentence that says a worker's record is an internal check (a broken state, or a case
    the path does not support), when ``documentation`` holds one: what a run-level rewrite replaces."""
    text = str(documentation or "")
    return next((c for c in (INTERNAL_CAUSE, LIMIT_CAUSE) if c in text), None)


def pending_spec(site: Site, roles: Roles, ctx: ReadContext, cause: Cause) -> dict[str, Any] | None:
    """What :func:`with_passed` needs, for an internal site whose deciding condition constrains
    a parameter or ``self`` attribute; None otherwise."""
    if cause.kind != "internal" or site.guard.handlers:
        return None
    deciding = passed_constraints(roles.deciding, ctx)
    if site.kind == "assert" and site.message is None:
        # A bare assert that a passed value stays within what the code computed
        # (``len(uids) <= self.max_per_batch``) states what the callers keep true.
        deciding = [c for c in deciding if not c.op.endswith("-of")]
    if not deciding:
        return None
    kind = classify(site, Cause("flag", (), "passed-flag"))
    asked = classify(site, Cause("input", (), "passed-request"))
    whole = all(passed_constraints([v], ctx) for v in roles.deciding if v.expr is not None)
    return {
        "whole": whole,
        "c": [_plain(c) for c in deciding],
        "v": [_plain(c) for c in passed_constraints(roles.survivors, ctx)],
        "cond": condition_code(roles.deciding),
        "avoid": negated_code(roles.deciding),
        # The record's kind, should the callers turn out to fill the value from the client's request.
        "rkind": [asked.error_type, asked.background, asked.handling],
        "where": scope_name(site),
        "kind": [kind.error_type, kind.background, kind.handling],
        "advice": advice_sentences(site.message.template[:4000]) if site.message else [],
        "mm": "multimodal_gen" in site.path,
        # A value that must be a str anywhere on the path to the site (a gate's ``isinstance``
        # too) is a str there: a list flag never fills it.
        "str": sorted(_token(name) for name in str_tested([*roles.deciding, *roles.gates]) if _token(name)),
    }


def data_spec(site: Site, roles: Roles, cause: Cause) -> dict[str, Any] | None:
    """For a ``parsed-config`` cause (an entry of data the function parses) or a ``caller-data``
    one (text a parser is handed), the parameter the data came in by, so the run can name the
    flag its callers fill it from (:func:`with_data_flag`, :func:`with_flag_text`); None otherwise."""
    if cause.kind == "internal":
        return _private_data_spec(site, roles)
    if cause.rule not in ("parsed-config", "caller-data"):
        return None
    params = {p.name for p in site.params}
    given = next((n for n in cause.names if n in params), None)
    if given is None:
        return None
    token = f"n:{given}"
    # Shaped as a pending spec so the run resolves the token with the others; ``with_passed``
    # leaves a record that is not internal as it is.
    if cause.rule == "caller-data":
        return {**_text_spec(site, roles, token), "said": f"Cause: {KIND_WORDS['input']} (`{given}`)."}
    return {"whole": False, "c": [[token, "data", []]], "v": [], "data": token}


def _private_data_spec(site: Site, roles: Roles) -> dict[str, Any] | None:
    """For an internal check of a private parser's text (``_parse_port(s)``), the spec
    :func:`with_flag_text` needs should every caller hand it a flag's value; None otherwise."""
    if not roles.deciding or site.guard.handlers:
        return None
    p = data_param(site, roles.deciding, private=True)
    if p is None:
        return None
    # The worker's internal cause sentence, whichever it is, is the one replaced.
    return {**_text_spec(site, roles, f"n:{p.name}"), "internal": True}


def _text_spec(site: Site, roles: Roles, token: str) -> dict[str, Any]:
    """The spec of a check of the text (or data) handed in as ``token``, shaped as a pending spec
    so the run resolves the token with the others, with what :func:`with_flag_text` words the
    check with."""
    kind = classify(site, Cause("flag", (), "passed-flag"))
    return {
        "whole": False,
        "c": [[token, "data", []]],
        "v": [],
        "data": token,
        "cond": condition_code(roles.deciding),
        "avoid": negated_code(roles.deciding),
        "where": scope_name(site),
        "kind": [kind.error_type, kind.background, kind.handling],
        "mm": "multimodal_gen" in site.path,
    }


def split_spec(site: Site, roles: Roles, ctx: ReadContext, cause: Cause) -> dict[str, Any] | None:
    """For a flag cause that a model dimension handed in does not divide by a parallel size
    (``num_heads % attn_tp_size != 0`` with ``num_heads`` a parameter), the dimension's token, so
    the run can say which config.json key it is (:func:`with_split_config`); None otherwise."""
    if cause.kind != "flag":
        return None
    for v in roles.deciding:
        found = divisor_test(simplify(v.expr)) if v.expr is not None else None
        if found is None:
            continue
        # The size divides the dimension, not a block size the dimension's share is checked
        # against; or the size is a multiple of it (``tp_size % num_kv_heads``: KV heads copied
        # over the ranks).
        multiple = not size_flags(found[1], ctx) and bool(size_flags(found[0], ctx))
        if not multiple and not size_flags(found[1], ctx):
            continue
        token = _token(unparse(found[1] if multiple else found[0]))
        if token:
            spec: dict[str, Any] = {"whole": False, "c": [[token, "data", []]], "v": [], "split": token}
            if multiple:
                spec["multiple"] = True
                # An earlier check of the function that passed needs the same size to divide
                # another dimension (``num_heads % tp_size == 0`` before the KV heads' test): a
                # multiple that breaks it only moves the failure there.
                also = _also_divides([*roles.survivors, *site.guard.asserted], unparse(found[0]), ctx)
                if also and also != token:
                    spec["c"].append([also, "data", []])
                    spec["also"] = also
            return spec
    return None


def _also_divides(passed: Sequence[AtomView | GuardAtom], size: str, ctx: ReadContext) -> str:
    """The token of a dimension an earlier passed check of the function needs ``size`` to divide."""
    for v in passed:
        expr = v.expr if isinstance(v, AtomView) else v.test
        found = divisor_test(simplify(expr)) if expr is not None else None
        if (
            found is not None
            and found[2] == "divides"
            and unparse(found[1]) == size
            and not size_flags(found[0], ctx)
        ):
            return _token(unparse(found[0]))
    return ""


def with_split_config(
    partial: Mapping[str, Any],
    token: str,
    keys: Sequence[FlagInfo],
    multiple: bool = False,
    also: tuple[str, Sequence[FlagInfo]] | None = None,
) -> dict[str, Any]:
    """``partial`` saying which config.json keys the dimension ``token`` is, so the size to give
    is one that divides the checkpoint's value (with ``multiple``, one that is a multiple of it;
    with ``also``, a dimension token and its keys that the size must divide as well, which an
    earlier check of the function needs)."""
    out = dict(partial)
    if len({f.dest for f in keys}) > _MAX_CONFIG_KEYS:
        return out  # a helper many models hand many dimensions: none is this checkpoint's for sure
    name = _name(token)
    keys_of = _json_keys(keys)
    shown = " or ".join(f"`{k}`" for k in keys_of)
    note = f"`{name}` is the checkpoint's {shown} (its config.json)"
    pick, value = ("is a multiple of it", "a multiple of") if multiple else ("divides it", "a divisor of")
    example = f"<{value} {keys_of[0]}>"
    if also is not None and 0 < len({f.dest for f in also[1]}) <= _MAX_CONFIG_KEYS:
        others = _json_keys(also[1])
        other = " or ".join(f"`{k}`" for k in others)
        pick += f" and still divides {other} (`{_name(also[0])}`, which an earlier check of the function needs it to divide)"
        example = f"<{value} {keys_of[0]} that divides {others[0]}>"
    out["documentation"] = f"{out.get('documentation', '')} {note[0].upper()}{note[1:]}."
    out["solutions"] = [
        f"{s}; {note}: pick a size that {pick}" if str(s).startswith("Change `") else s
        for s in out.get("solutions", [])
    ]
    # The config key wins over the code's own name for the dimension (``<a divisor of num_heads>``).
    out["exampleFix"] = _SIZE_PLACEHOLDER_RE.sub(example, str(out.get("exampleFix", "")))
    return out


_SIZE_PLACEHOLDER_RE = re.compile(r"<(?:accepted-value|a divisor of [^<>]*|a multiple of [^<>]*)>")


def _json_keys(keys: Sequence[FlagInfo]) -> list[str]:
    """The config.json keys config infos stand for (each ``flag`` spells its keys ``a / b``)."""
    return [k for f in keys for k in f.flag.split(" / ")]


def with_flag_text(
    partial: Mapping[str, Any], spec: Mapping[str, Any], param: str, flag: str
) -> dict[str, Any]:
    """``partial`` (a parser's check on the text handed in as ``param``) as the check of the
    value ``flag`` gives, when every caller fills ``param`` from that flag; else unchanged."""
    doc = str(partial.get("documentation", ""))
    said = str(spec.get("said", "")) or (internal_sentence(doc) or "" if spec.get("internal") else "")
    if not said or said not in doc:
        return dict(partial)
    where, cond, avoid = (str(spec.get(k, "")) for k in ("where", "cond", "avoid"))
    via = f"its value reaches `{where}` as `{param}`"
    out = dict(partial)
    out["documentation"] = doc.replace(said, f"Cause: a launch flag (`{flag}`): {via}.")
    out["triggerScenarios"] = (
        f"Launching with a `{flag}` value for which `{cond}` holds when {where} reads it ({via})."
    )
    out["commonSituations"] = (
        f"A launch command or deployment script that gives `{flag}` a value {where} does not accept."
    )
    fix = f"Change `{flag}` in the launch command so that `{avoid}` holds for its value ({via})"
    kept = [
        str(s)
        for s in partial.get("solutions", ())
        if not str(s).startswith(("Send ", "Pass ", "Fix ", INTERNAL_CHECK)) and f"`{param}`" not in str(s)
    ]
    advice = [s for s in kept if s.startswith("The message says")]
    out["solutions"] = list(dict.fromkeys([*advice, fix, *kept]))[:8]
    base = _launch(spec)
    given = re.compile(rf"(?<= {re.escape(flag)} )\S+")

    def launch(value: str) -> str:
        # The launcher may give the flag already (``--model-path <model>``): that value changes.
        return given.sub(value, base) if given.search(base) else f"{base} {flag} {value}"

    out["exampleFix"] = f"# before\n{launch('<current-value>')}\n# after\n{launch('<accepted-value>')}"
    return _with_kind(out, spec)


def _with_kind(out: dict[str, Any], spec: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` with the error type, background and handling ``spec`` holds for its new cause."""
    kind = spec.get("kind")
    if isinstance(kind, list) and len(kind) == 3:
        out["errorType"], out["backgroundTag"], out["handlingStrategy"] = (str(k) for k in kind)
    return out


def with_data_flag(partial: Mapping[str, Any], param: str, flag: str) -> dict[str, Any]:
    """``partial`` saying that the data handed in as ``param`` is what ``flag`` gives."""
    out = dict(partial)
    out["documentation"] = str(out.get("documentation", "")).replace(
        f"handed in (`{param}`)", f"handed in (`{param}`, the value of `{flag}`)"
    )
    out["triggerScenarios"] = str(out.get("triggerScenarios", "")).replace(
        f"as `{param}`", f"as `{param}` (from `{flag}`)"
    )
    out["solutions"] = [
        str(s).replace(f"given as `{param}`", f"given with `{flag}`") for s in out.get("solutions", [])
    ]
    return out


def _token(subject: str) -> str:
    """The spec token of a parameter or ``self`` attribute written as code."""
    if subject.isidentifier():
        return f"n:{subject}"
    head, _, attr = subject.partition(".")
    return f"s:{attr}" if head == "self" and attr.isidentifier() else ""


def _accepted(spec: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """token -> the values an ``elif`` chain of ``!=`` / ``not in`` on it handles."""
    out: dict[str, set[str]] = {}
    other: set[str] = set()
    for row in spec.get("c", ()):
        token, op, values = row
        if op in ("ne", "not-in"):
            out.setdefault(str(token), set()).update(map(str, values))
        else:
            other.add(str(token))
    return {t: frozenset(v) for t, v in out.items() if t not in other}


def passed_table(
    files: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], sites: SiteReach
) -> dict[str, dict[str, dict[str, list[list[Any]]]]]:
    """path -> qualname -> token -> the flags (plain) the callers fill the token from, for every
    partial record with a pending spec.

    A ``self`` attribute that a check run while the object is built already restricts to the
    same values or fewer (``init_kv_buffer`` rejects every layout this method does not handle)
    cannot reach a later check with a bad value: that later check stays internal. Two checks that
    both run while it is built are not ordered here, so neither silences the other (one of them
    is what the user meets)."""
    specs: list[tuple[str, str, Mapping[str, Any]]] = []
    for path, partials in files:
        for partial in partials:
            spec = partial.get(PASSED_KEY)
            if isinstance(spec, dict):
                specs.append((path, str(partial.get("id", "")).split("\x1f", 1)[0], spec))
    built: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
    for path, qualname, spec in specs:
        for token, values in _accepted(spec).items():
            if token.startswith("s:") and sites.runs_when_built(path, qualname):
                built.setdefault(token, []).append((path, qualname, values))
    out: dict[str, dict[str, dict[str, list[list[Any]]]]] = {}
    for path, qualname, spec in specs:
        accepted = _accepted(spec)
        early = sites.runs_when_built(path, qualname)
        for token in dict.fromkeys(str(c[0]) for c in spec.get("c", ()) if c):
            mine = accepted.get(token)
            if (
                mine is not None
                and not early
                and any(
                    (p, q) != (path, qualname) and theirs <= mine and sites.same_object(path, qualname, p, q)
                    for p, q, theirs in built.get(token, ())
                )
            ):
                continue
            flags = sites.passed_flags(path, qualname, token)
            if not flags and not spec.get("data"):
                # No flag: the callers may fill it from the model's config (``config.n_experts``).
                # ``flag`` holds the config.json keys, ``dest`` the attribute the code reads.
                flags = tuple(
                    FlagInfo(" / ".join(keys), attr, CONFIG_SOURCE)
                    for attr, keys in sites.passed_config(path, qualname, token)
                )
            if not flags and not spec.get("data"):
                # Nor the config: an environment variable read where the value is made
                # (``self.use_swizzle = envs.SGLANG_X.get()``), named by its ``flag``.
                flags = sites.passed_envs(path, qualname, token)
            if not flags and not spec.get("data"):
                # Nor a variable: a field of the client's request (``req.sampling_params.top_k``).
                flags = tuple(
                    FlagInfo(name, "", REQUEST_SOURCE) for name in sites.passed_request(path, qualname, token)
                )
            if flags:
                out.setdefault(path, {}).setdefault(qualname, {})[token] = [flag_plain(i) for i in flags]
    return out


def _plain(c: Constraint) -> list[Any]:
    return [c.name, c.op, list(c.values)]


def flag_plain(info: FlagInfo) -> list[Any]:
    """A flag as JSON (the run's reach table keeps it)."""
    return [
        info.flag,
        info.dest,
        info.namespace,
        int(info.is_bool),
        list(info.choices),
        int(info.is_list),
        int(info.via_group),
        info.default,
    ]


def flag_from_plain(data: Sequence[Any]) -> FlagInfo | None:
    try:
        flag, dest, ns, is_bool, choices, *rest = data
        return FlagInfo(
            str(flag),
            str(dest),
            str(ns),
            choices=tuple(map(str, choices)),
            is_bool=bool(is_bool),
            is_list=bool(rest and rest[0]),
            via_group=bool(len(rest) > 1 and rest[1]),
            default=str(rest[2]) if len(rest) > 2 else "",
        )
    except (TypeError, ValueError):
        return None


def _as_flags(rows: Sequence[Any], resolved: Mapping[str, FlagInfo]) -> list[Constraint]:
    out = []
    for row in rows:
        try:
            token, op, values = row
        except (TypeError, ValueError):
            continue
        info = resolved.get(str(token))
        if info is not None:
            out.append(Constraint("flag", info.flag, str(op), tuple(map(str, values)), info))
    return out


def _size_says(c: Constraint, whole: bool) -> bool:
    """Whether a constraint on a value resolved through a process group's size makes the flag
    the cause: a split of a model dimension over it, or a literal test when the whole deciding
    condition is about passed values. A divisibility test on any other value (``need % page``)
    is the code's own arithmetic, and a size beside another test only says the parallel path
    runs (see :mod:`extractor.prose.world_size`)."""
    info = c.info
    group = info is not None and info.via_group
    if c.op in ("indivisible", "divides"):
        return group
    return whole or not group


def _sources(
    tokens: Sequence[str], infos: Mapping[str, Sequence[FlagInfo]], whose: str = ""
) -> tuple[list[str], str, str]:
    """The names the values of ``tokens`` come from (flags, variables, request fields), those names
    as shown, and which value comes from which (a parameter ``pr`` from ``SGLANG_X``)."""
    names = list(dict.fromkeys(f.flag for t in tokens for f in infos[t]))
    shown = ", ".join(f"`{n}`" for n in names)
    via = ", ".join(
        f"`{_name(t)}` from {whose}{' or '.join(f'`{f.flag}`' for f in infos[t])}" for t in tokens
    )
    return names, shown, via


def _name(token: str) -> str:
    kind, _, name = token.partition(":")
    return f"self.{name}" if kind == "s" else name


def with_passed(
    partial: Mapping[str, Any], spec: Mapping[str, Any], flags: Mapping[str, Sequence[FlagInfo]]
) -> dict[str, Any]:
    """``partial`` with a flag cause, when ``flags`` resolves a deciding value of ``spec``; else unchanged.

    A value filled from more than one flag (two callers, two flags) names them all, and the fix
    is given for the first."""
    out = dict(partial)
    if spec.get("data"):
        return out  # text or data handed in: :func:`with_flag_text` and :func:`with_data_flag` word it
    config = {t: fs for t, fs in flags.items() if fs and all(f.namespace == CONFIG_SOURCE for f in fs)}
    if config and len(config) == len([t for t, fs in flags.items() if fs]):
        return with_passed_config(partial, spec, config)
    envs = {t: fs for t, fs in flags.items() if fs and all(f.namespace == ENV_SOURCE for f in fs)}
    if envs and len(envs) == len([t for t, fs in flags.items() if fs]):
        return with_passed_env(partial, spec, envs)
    fields = {t: fs for t, fs in flags.items() if fs and all(f.namespace == REQUEST_SOURCE for f in fs)}
    if fields and len(fields) == len([t for t, fs in flags.items() if fs]):
        return with_passed_request(partial, spec, fields)
    flags = {
        t: fs for t, fs in flags.items() if t not in config and not any(f.namespace == ENV_SOURCE for f in fs)
    }
    # A value the check needs to be a str is not a list flag's (see ``cause.str_tested``).
    as_str = set(spec.get("str", ()))
    flags = {t: [f for f in fs if not (f.is_list and t in as_str)] for t, fs in flags.items()}
    resolved = {t: fs[0] for t, fs in flags.items() if fs}
    # Every deciding atom is a test of a value the callers fill from a flag.
    whole = bool(spec.get("whole")) and all(str(r[0]) in resolved for r in spec.get("c", ()) if r)
    deciding = [c for c in _as_flags(spec.get("c", ()), resolved) if _size_says(c, whole)]
    said = internal_sentence(partial.get("documentation"))
    if not deciding or said is None:
        return out
    survivors = _as_flags(spec.get("v", ()), resolved)
    # In the order the check reads them: the table's own order depends on where it came from.
    tokens = [t for t in dict.fromkeys(str(r[0]) for r in spec["c"]) if flags.get(t)]
    _, shown, via = _sources(tokens, flags)
    where = str(spec.get("where", ""))
    cond = str(spec.get("cond", ""))
    cause = f"Cause: a launch flag ({shown}): the callers pass its value into `{where}` ({via})."
    out["documentation"] = str(partial["documentation"]).replace(said, cause)
    failing = " ".join(failing_launch(deciding))
    # ``not self.allow_x`` of a switch: the launch that fails is the one that leaves it out.
    off = all(c.op == "falsy" and c.info is not None and c.info.is_bool for c in deciding)
    if off:
        out["triggerScenarios"] = (
            f"Launching without {shown} makes {where} raise it when the rest of the check holds "
            f"(the check is `{cond}`; {via})."
        )
    elif failing:
        out["triggerScenarios"] = (
            f"Launching with `{failing}` makes {where} raise it (the check is `{cond}`; {via})."
        )
    else:
        out["triggerScenarios"] = f"Launching with {shown} such that `{cond}` holds in {where} ({via})."
    refused = refused_values(deciding)
    if refused:
        out["triggerScenarios"] = refused_trigger(out["triggerScenarios"], refused, frozenset())
    out["commonSituations"] = (
        f"A launch command, deployment script or programmatic ServerArgs/Engine call that leaves out {shown}."
        if off
        else f"A launch command, deployment script or programmatic ServerArgs/Engine call that sets {shown} "
        f"to a value {where} does not handle."
    )
    fixed = fixed_settings(deciding, survivors, {})
    sols = [f"The message says: {s}" for s in spec.get("advice", ())]
    # ``num_hidden_layers < pp_size``: the bound is a value the code has, so it is named as such.
    sols.extend(_bound_sentence(c, where) for c in deciding if c.op in _BOUND_WORDS and c.values)
    sols.extend(setting_words(opts) for opts in fixed)
    if not fixed:
        sols.append(f"Change {shown} in the launch command so that `{cond}` no longer holds")
    out["solutions"] = in_place_of_the_report(sols, partial)
    base = _launch(spec)
    if fixed:
        pick = next(
            (s for s in fixed[0] if isinstance(s.value, str) and not s.value.startswith("<")), fixed[0][0]
        )
        before = " ".join([base, *failing_launch([c for c in deciding if c.name == pick.constraint.name])])
        after = " ".join([base, *render_setting(pick)])
        if before != after:
            head = REFUSED_BEFORE if refused else "# before"
            out["exampleFix"] = f"{head}\n{before}\n# after\n{after}"
    else:
        # No one value to name (a size that must divide a model dimension): the launch still
        # shows which flag to change, in place of the bug-report steps of an internal check.
        flag = deciding[0].name
        out["exampleFix"] = (
            f"# before\n{base} {flag} <current-value>\n# after\n{base} {flag} <accepted-value>"
        )
    return _with_kind(out, spec)


def with_passed_request(
    partial: Mapping[str, Any], spec: Mapping[str, Any], fields: Mapping[str, Sequence[FlagInfo]]
) -> dict[str, Any]:
    """``partial`` with a request cause, when the callers fill every deciding value of ``spec`` from
    fields of the client's request (``top_k`` from ``req.sampling_params.top_k``); else unchanged."""
    out = dict(partial)
    said = internal_sentence(partial.get("documentation"))
    if said is None or not spec.get("whole"):
        return out
    tokens = [t for t in dict.fromkeys(str(r[0]) for r in spec.get("c", ()) if r) if t in fields]
    if not tokens:
        return out
    _, shown, via = _sources(tokens, fields, "the request's ")
    where, cond = str(spec.get("where", "")), str(spec.get("cond", ""))
    avoid = str(spec.get("avoid", "")) or f"not ({cond})"
    out["documentation"] = str(partial["documentation"]).replace(
        said, f"Cause: the request or call input ({shown}): the callers pass it into `{where}` ({via})."
    )
    out["triggerScenarios"] = f"A request whose {shown} makes `{cond}` hold in {where} ({via})."
    out["commonSituations"] = f"A client sending {shown} with a value {where} does not handle."
    sols = [f"The message says: {s}" for s in spec.get("advice", ())]
    sols.append(f"Send {shown} so that `{avoid}` holds in {where} (this check rejects the request otherwise)")
    out["solutions"] = in_place_of_the_report(sols, partial)
    out["exampleFix"] = (
        f"# before: a request whose {shown} makes `{cond}` hold\n"
        f"# after: the same request with {shown} changed so that `{avoid}`"
    )
    return _with_kind(out, {"kind": spec.get("rkind")})


# What a passed value must be for an ordering against a computed value to pass: ``gt-of`` fails
# where the value is greater than the other side.
_BOUND_WORDS = {"gt-of": "at most", "ge-of": "below", "lt-of": "at least", "le-of": "above"}


def _bound_sentence(c: Constraint, where: str) -> str:
    return f"Give `{c.name}` a value {_BOUND_WORDS[c.op]} `{c.values[0]}`: {where} compares it with that"


def with_passed_env(
    partial: Mapping[str, Any], spec: Mapping[str, Any], envs: Mapping[str, Sequence[FlagInfo]]
) -> dict[str, Any]:
    """``partial`` with an environment-variable cause, when the callers fill every deciding value
    of ``spec`` they fill at all from variables (``swizzle`` from ``self.use_swizzle``, set from
    ``SGLANG_X``); else unchanged."""
    out = dict(partial)
    said = internal_sentence(partial.get("documentation"))
    rows = [r for r in spec.get("c", ()) if r and str(r[0]) in envs]
    if said is None or not rows or not spec.get("whole"):
        return out
    tokens = list(dict.fromkeys(str(r[0]) for r in rows))
    names, shown, via = _sources(tokens, envs)
    where, cond = str(spec.get("where", "")), str(spec.get("cond", ""))
    out["documentation"] = str(partial["documentation"]).replace(
        said, f"Cause: an environment variable ({shown}): the callers pass its value into `{where}` ({via})."
    )
    out["triggerScenarios"] = f"Running with {shown} set so that `{cond}` holds in {where} ({via})."
    out["commonSituations"] = (
        f"A launch environment (shell, container or job spec) that sets {shown} to a value {where} does not handle."
    )
    ops = {str(r[1]) for r in rows}
    first = names[0]
    base = _launch(spec)
    unset = _default_passes(rows, envs)
    if unset is not None:
        # Left unset, the variable's declared default passes every deciding test: unsetting it
        # is the fix, and needs no value to be worked out.
        sols = [setting_words([unset])]
        fix = f"# before\n{unset.constraint.name}=<current-value> {base}\n# after\n{base}"
    elif ops == {"truthy"}:
        sols = [f"Set {shown} to 0 (off): {where} fails when it is on (`{cond}`)"]
        fix = f"# before\n{first}=1 {base}\n# after\n{first}=0 {base}"
    elif ops <= {"falsy", "is-none"}:
        sols = [f"Set {shown}: {where} fails when it is off or unset (`{cond}`)"]
        fix = f"# before\n{base}\n# after\n{first}=1 {base}"
    elif (allowed := _allowed_words(rows)) and len(names) == 1:
        # ``pr not in _PATCHES`` (a literal table): the values the code has an entry for.
        # ``None`` stands for the variable left unset: no value spells it.
        words = [f"`{v}`" for v in allowed if v != "None"] or ["a value it has an entry for"]
        or_unset = ", or leave it unset" if "None" in allowed else ""
        sols = [
            f"Set {shown} to {or_list(words)}{or_unset}: the values {where} accepts (`{cond}` fails otherwise)"
        ]
        after = next((f"{first}={v} {base}" for v in allowed if v != "None"), base)
        fix = f"# before\n{first}=<current-value> {base}\n# after\n{after}"
    else:
        sols = [f"Change {shown} so that `{cond}` no longer holds"]
        fix = f"# before\n{first}=<current-value> {base}\n# after\n{first}=<accepted-value> {base}"
    sols[:0] = [f"The message says: {s}" for s in spec.get("advice", ())]
    out["solutions"] = in_place_of_the_report(sols, partial)
    out["exampleFix"] = fix
    return _with_kind(out, spec)


def _allowed_words(rows: Sequence[Sequence[Any]]) -> list[str]:
    """The values every ``!=`` / ``not in`` row lets through, when those are all the rows and at
    most eight values (in the code's order); empty otherwise."""
    allowed: list[str] | None = None
    for row in rows:
        if len(row) < 3 or str(row[1]) not in ("ne", "not-in"):
            return []
        values = [str(v) for v in row[2]]
        allowed = values if allowed is None else [v for v in allowed if v in values]
    return allowed if allowed and len(allowed) <= 8 else []


def _default_passes(rows: Sequence[Sequence[Any]], envs: Mapping[str, Sequence[FlagInfo]]) -> Setting | None:
    """The variable left unset, when the deciding values all come from one variable whose default
    (the reader's, else the registry's) makes every deciding test false."""
    infos = {i.flag: i for r in rows for i in envs[str(r[0])]}
    if len(infos) != 1:
        return None
    (info,) = infos.values()
    cs = [Constraint("env", info.flag, str(r[1]), tuple(map(str, r[2])) if len(r) > 2 else ()) for r in rows]
    default = passing_default(cs, EnvInfo(info.flag, default=info.default), [])
    return Setting(cs[0], None, default) if default is not None else None


def with_passed_config(
    partial: Mapping[str, Any], spec: Mapping[str, Any], keys: Mapping[str, Sequence[FlagInfo]]
) -> dict[str, Any]:
    """``partial`` with a model cause, when every deciding value of ``spec`` is one the callers
    fill from the model's config (``NgramEmbedding(n=config.ngram_n)`` checked ``n > 1``)."""
    out = dict(partial)
    rows = [r for r in spec.get("c", ()) if r]
    said = internal_sentence(partial.get("documentation"))
    if not rows or not all(str(r[0]) in keys for r in rows) or said is None:
        return out
    tokens = list(dict.fromkeys(str(r[0]) for r in rows))
    names = list(dict.fromkeys(k for t in tokens for f in keys[t] for k in f.flag.split(" / ")))
    if len({f.dest for t in tokens for f in keys[t]}) > _MAX_CONFIG_KEYS:
        # A helper that many models call with many keys (``divide(heads, tp)``): no one of them
        # is the checkpoint's to fix, and the run may not see what the other callers pass.
        return out
    via = ", ".join(f"`{_name(t)}` from {' or '.join(_config_read(f) for f in keys[t])}" for t in tokens)
    where = str(spec.get("where", ""))
    cond = str(spec.get("cond", ""))
    shown = ", ".join(f"`{n}`" for n in names)
    out["documentation"] = str(partial["documentation"]).replace(
        said,
        f"Cause: the model (its checkpoint or config) ({shown}): the callers pass the config's value into `{where}` ({via}).",
    )
    out["triggerScenarios"] = (
        f"Loading a checkpoint whose config gives {shown} a value for which `{cond}` holds in {where} ({via})."
    )
    out["commonSituations"] = (
        f"A checkpoint, or a config.json edited by hand, whose {shown} {where} does not handle."
    )
    sols = [f"The message says: {s}" for s in spec.get("advice", ())]
    sols.append(
        f"Use a checkpoint whose config.json sets {shown} so that `{cond}` no longer holds "
        f"(it reaches `{where}` as {', '.join(f'`{_name(t)}`' for t in tokens)}), or correct that entry if it was edited"
    )
    out["solutions"] = in_place_of_the_report(sols, partial)
    base = _launch(spec)
    out["exampleFix"] = (
        f"# before: a checkpoint whose config.json gives {shown} a value {where} rejects\n{base}\n"
        f"# after: a checkpoint whose config sets {shown} so that the check passes\n"
        f"{base.replace('<model>', '<other-checkpoint>')}"
    )
    out["errorType"], out["backgroundTag"], out["handlingStrategy"] = (
        "validation",
        "model-feature-mismatch",
        "validation",
    )
    return out


def _config_read(info: FlagInfo) -> str:
    """``config.x``, and the config.json keys it is read from when they are spelled otherwise."""
    read = f"`config.{info.dest}`"
    keys = [k for k in info.flag.split(" / ") if k != info.dest]
    if not keys:
        return read
    return f"{read} (the config class reads it from {' or '.join(f'`{k}`' for k in keys)})"


def in_place_of_the_report(sols: Sequence[str], partial: Mapping[str, Any]) -> list[str]:
    """``sols`` first, then the worker's solutions less the bug report of an internal check."""
    kept = [s for s in partial.get("solutions", ()) if not str(s).startswith(INTERNAL_CHECK)]
    return list(dict.fromkeys([*sols, *kept]))[:8]


def _launch(spec: Mapping[str, Any]) -> str:
    """The server command of the spec's site (the diffusion server's for multimodal_gen code)."""
    return launcher_of_path("python/sglang/multimodal_gen/" if spec.get("mm") else "python/sglang/srt/")
