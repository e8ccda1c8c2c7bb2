"""What the record tells the user: the condition that decides the raise, its cause, the
solutions and the ``exampleFix``, per cause kind (see :mod:`.cause`).

Survivors of earlier checks are never turned into advice: negating one trips the check above.
Gates are stated as context ("this check runs only when ..."); a gate on a flag the user set is
offered as the workaround of turning the optional feature off.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import Site, and_join
from extractor.analysis.walk import called_name
from extractor.prose import passed_on
from extractor.prose.cause import (
    CAPABILITY,
    CHECKPOINT_THING_RE,
    FORMAT_RE,
    Cause,
    Roles,
    asked_flag,
    bound_config_key,
    capability_minimum,
    config_keys,
    is_limit,
    message_text,
    missing_keys,
)
from extractor.prose.combinations import combination_of, told_setting, told_unset
from extractor.prose.commands import (
    VALIDATOR_WRAPPED,
    call_of,
    code_fix,
    launcher,
    overridable_hook,
    private_owner,
)
from extractor.prose.constraints import (
    CMP_OPS,
    MIRROR,
    AtomView,
    Constraint,
    divisor_test,
    fails_on_hardware,
    literal,
    simplify,
    unparse,
    wants_hardware,
)
from extractor.prose.device import DEVICE_RULE, PLATFORM_RULE
from extractor.prose.dtype import model_dtype
from extractor.prose.fixes import (
    REFUSED_BEFORE,
    OtherCheck,
    Setting,
    advice_sentences,
    companions,
    failing_group,
    failing_launch,
    failing_words,
    fixed_settings,
    holds,
    launch_values,
    refused_trigger,
    refused_values,
    render_setting,
    setting_words,
    together_words,
)
from extractor.prose.flag_spelling import declared_flag, find_flag
from extractor.prose.knowledge import EnvInfo, FlagInfo, Knowledge, is_knowledge_path, requirement_name
from extractor.prose.origins import accepted_types, config_key_of, data_param, keys_checked
from extractor.prose.platforms import alternatives
from extractor.prose.why import scope_name
from extractor.prose.why import situations as situations_of
from extractor.prose.wording import filled_at_launch, loop_end_words
from extractor.prose.world_size import TP_PARTS, split_share

__all__ = [
    "INTERNAL_CHECK",
    "KIND_WORDS",
    "LIMIT_CAUSE",
    "Advice",
    "advise",
    "condition_code",
    "handled_values",
    "negated_code",
]

LIMIT_CAUSE = (
    "Cause: a case this code does not support, as its message says, not a broken state; nothing found "
    "here shows which setting leads to it."
)
"""The cause of an internal check whose message states what the path supports (:func:`is_limit`)."""


INTERNAL_CHECK = "This is an internal check of "
"""How the bug-report solution of an internal cause starts."""
NOT_EXPECTED = "nothing in the launch command, environment or request is expected to trip it"
"""What the bug-report solution says of the check, after its function's name."""
_DRIVER_RE = re.compile(
    r"\b(?:CUDA )?driver\s*(?:version\s*)?(?:>=|≥|of at least|at least)\s*v?(\d+(?:\.\d+)*)", re.I
)
_UPGRADE_RE = re.compile(r"\b(upgrade|update|newer|too old|outdated)\b", re.I)


@dataclass(frozen=True)
class Advice:
    solutions: list[str]
    example_fix: str
    trigger: str
    situations: str
    cause_sentence: str


def condition_code(views: Sequence[AtomView]) -> str:
    """The atoms as one condition, negations pushed in (``x is None``, ``'k' in d``)."""
    parts = [v.simple for v in views if v.expr is not None and v.atom.kind != "except"]
    return and_join(parts)


def negated_code(views: Sequence[AtomView]) -> str:
    """The condition that avoids the site, simplified."""
    exprs = [v.expr for v in views if v.expr is not None and v.atom.kind != "except"]
    if not exprs:
        return ""
    whole: ast.expr = exprs[0] if len(exprs) == 1 else ast.BoolOp(op=ast.And(), values=list(exprs))
    return unparse(simplify(ast.UnaryOp(op=ast.Not(), operand=whole)))


def handled_values(views: Sequence[AtomView]) -> tuple[str, list[str]] | None:
    """For an ``elif`` chain over one value (``x != 'a'``, ``x not in (...)``): the value and the
    literals the chain accepts."""
    groups: dict[str, list[str]] = {}
    for v in views:
        if v.expr is None:
            continue
        e = simplify(v.expr)
        parts = e.values if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And) else [e]
        for part in parts:
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
                continue
            if not isinstance(part.ops[0], ast.NotEq | ast.NotIn | ast.IsNot):
                continue
            lit = literal(part.comparators[0])
            if lit is None or lit == ("None",):
                continue
            if not isinstance(part.left, ast.Name | ast.Attribute | ast.Subscript):
                continue
            subject = unparse(part.left)
            if subject:
                groups.setdefault(subject, []).extend(lit)
    best = max(groups.items(), key=lambda kv: len(kv[1]), default=None)
    if best is None:
        return None
    return best[0], list(dict.fromkeys(best[1]))[:12]


def _where(site: Site) -> str:
    return f"`{site.qualname}`" if site.qualname not in ("", "<module>") else f"`{site.path}`"


class _GateWay(NamedTuple):
    """One way off the gated path: its wording, and the variable it turns off (if one does)."""

    text: str
    env: str = ""
    on_by_default: bool = False
    """``env`` is on unless turned off: the way out sets it to 0 instead of unsetting it."""


# A flag that splits the model or the batch over ranks (``--pp-size``, ``--attn-cp-size``, ``--ring-degree``).
_WEIGHT_SPLIT_RE = re.compile(r"^--(?:[a-z]+-)*(?:tp|pp|ep)-size$")
_SPLIT_FLAG_RE = re.compile(r"^--(?:[a-z]+-)*[a-z]?(?:tp|pp|dp|ep|cp|sp)-size$|^--[a-z-]+-degree$")


def _told(msg: str) -> list[str]:
    return [f"The message says: {s}" for s in advice_sentences(msg)]


def _gate_workarounds(roles: Roles, survivor_names: set[str], knowledge: Knowledge) -> list[_GateWay]:
    """Turning off the optional feature that gates the path (a flag or env var set to enable it)."""
    out: dict[str, _GateWay] = {}
    for v in roles.gates:
        for c in v.constraints:
            if c.name in survivor_names:
                continue
            if c.op == "truthy" or (c.op == "eq" and c.values and c.values[0] == "True"):
                if c.kind == "flag" and c.info is not None and c.info.detected:
                    continue  # on when the data needs it: forcing it off misreads that data
                if c.kind == "flag" and c.info is not None and c.info.off_flag:
                    way = _GateWay(
                        f"Or launch with `{c.info.off_flag}`: this check only runs when `{c.name}` is on, "
                        "which leaving it out may not avoid (its default, or what the launch detects)"
                    )
                elif c.kind == "flag":
                    way = _GateWay(f"Or launch without `{c.name}`: this check only runs when it is given")
                elif (info := knowledge.env_of(c.name)) is not None and info.on_by_default:
                    # Unsetting a variable that is on by default leaves it on.
                    text = f"Or set `{c.name}=0`: this check only runs when it is on, which is its default"
                    way = _GateWay(text, c.name, on_by_default=True)
                elif c.kind == "env" and knowledge.launches_env(c.name):
                    # The launch turns it on itself for some setups: only an explicit 0 keeps it off.
                    text = (
                        f"Or set `{c.name}=0`: this check only runs when it is on, and sglang turns it on "
                        "itself for some setups"
                    )
                    way = _GateWay(text, c.name, on_by_default=True)
                else:
                    way = _GateWay(f"Or unset `{c.name}`: this check only runs when it is set", c.name)
            elif c.op == "ne" and c.kind == "env" and c.values and c.values[0].lower() in ("0", "false"):
                # ``os.environ.get("X", "1") != "0"``: on unless turned off, and off only by that value.
                way = _GateWay(
                    f"Or set `{c.name}={c.values[0]}`: this check only runs when it is not {c.values[0]}, "
                    "and leaving it unset counts as that too",
                    c.name,
                    on_by_default=True,
                )
            elif c.op == "is-none" and c.kind == "flag":
                way = _GateWay(f"Or give `{c.name}` a value: this check only runs when it is left unset")
            elif c.op == "gt" and c.values == ("1",) and c.kind == "flag" and _SPLIT_FLAG_RE.match(c.name):
                # ``not pp_group.is_first_rank``: no split, no later rank.
                # Whether the model fits is a question for a split of its weights; a split of the
                # sequence or of the KV cache is one of speed and context length.
                fits = ", if the model fits without that split" if _WEIGHT_SPLIT_RE.match(c.name) else ""
                way = _GateWay(f"Or launch with `{c.name} 1`{fits}: this check only runs when it is above 1")
            elif (
                c.op == "falsy"
                and c.kind == "env"
                and (info := knowledge.env_of(c.name)) is not None
                and info.on_by_default
            ):
                # Off only because someone set it so: its default leaves the path.
                way = _GateWay(
                    f"Or leave `{c.name}` at its default (on): this check only runs when it is set to 0 or false",
                    c.name,
                )
            elif (
                c.op in ("eq", "in")
                and c.values
                and c.values[0] not in ("None", "False")
                and c.kind == "flag"
            ):
                vals = ", ".join(c.values)
                way = _GateWay(f"Or pick a `{c.name}` other than {vals}: this check only runs with {vals}")
            else:
                continue
            out.setdefault(way.text, way)
    return list(out.values())[:2]


def _contradicts(options: Sequence[Setting], told: Sequence[str]) -> bool:
    """Whether the settings of one flag leave out the value the message tells the user to pass."""
    if options[0].constraint.name != told[0] or len(told) < 2:
        return False
    return not any(str(s.value) == told[1] for s in options)


def _told_first(options: list[Setting], told: Sequence[str]) -> list[Setting]:
    """The settings of one flag with the value the message tells the user to pass first."""
    if options[0].constraint.name != told[0] or len(told) < 2:
        return options
    return sorted(options, key=lambda s: str(s.value) != told[1])


def _gate_words(roles: Roles) -> list[str]:
    """Launch words that put the run on the gated path: only gates that need something set
    (``--x`` given, ``--x v``); a gate an ordinary launch already passes adds nothing."""
    words = []
    decided = {c.name for v in roles.deciding for c in v.constraints}
    # A gate on the flag the check itself tests adds nothing the failing value does not say.
    for c in (c for v in roles.gates for c in v.constraints if c.name not in decided):
        if c.op in ("truthy", "in") or (c.op == "eq" and c.values and c.values[0] not in ("None", "False")):
            words.extend(failing_words(c))
        elif c.op == "not-none" and c.info is not None and c.info.optional:
            # ``--x`` given at all: a flag no default or validation fills is the user's choice.
            words.extend(failing_words(c))
        elif (
            c.op in ("lt", "le", "gt", "ge")
            and c.kind == "flag"
            and c.info is not None
            and holds(c, c.info.default) is False
        ):
            # ``offload_group_size > 0`` with a default of -1: the path needs the flag set.
            words.extend(failing_words(c))
    return words


def _no_change(fix: str) -> bool:
    """An example whose before and after commands are the same (or that has none)."""
    parts = fix.split("\n")
    return len(parts) != 4 or parts[1] == parts[3]


RUNS_ITSELF = "<runs itself>"
"""Put among the ``own`` flags of a site in a tool script's own code: every fix runs the script."""
_SERVER_CODE_RE = re.compile(r"/srt/|/multimodal_gen/runtime/")


def _command(
    site: Site, knowledge: Knowledge, before: list[str], after: list[str], own: frozenset[str] = frozenset()
) -> str:
    # ``own``: flags the site's file declares for itself; a fix on one runs that script, and so
    # does a fix of a tool script's own code that changes no flag (:data:`RUNS_ITSELF`): the
    # server's flags it names are those of the server the tool talks to.
    words = [*before, *after]
    base = launcher(
        site,
        knowledge,
        any(w in own for w in words) or (RUNS_ITSELF in own and not any(w.startswith("-") for w in words)),
    )
    if "--model-path" in before or "--model-path" in after:
        base = base.replace(" --model-path <model>", "")
    env_b = [w for w in before if "=" in w and not w.startswith("-")]
    env_a = [w for w in after if "=" in w and not w.startswith("-")]
    fl_b = [w for w in before if w not in env_b]
    fl_a = [w for w in after if w not in env_a]
    return "\n".join(
        ["# before", " ".join([*env_b, base, *fl_b]), "# after", " ".join([*env_a, base, *fl_a])]
    )


def _pick(chosen: Sequence[Setting]) -> Setting:
    """The setting a fix shows: the first with a concrete value."""
    return next((s for s in chosen if isinstance(s.value, str) and not s.value.startswith("<")), chosen[0])


def _settings_fix(
    site: Site,
    knowledge: Knowledge,
    roles: Roles,
    chosen: list[Setting],
    deciding: list[Constraint],
    own: frozenset[str] = frozenset(),
) -> str:
    """Before: a launch that trips the check (gates and every deciding flag/env at a failing
    value); after: the same launch with one of them changed, preferring a concrete value."""
    pick = _pick(chosen)
    gate = _gate_words(roles)
    before, after = list(gate), list(gate)
    # The failing value keeps every earlier test of the same flag on the path (``cpu_offload_gb > 0``
    # returned before ``cpu_offload_gb != 0`` is checked: the failing value is below 0).
    path = [c for v in [*roles.gates, *roles.survivors] for c in v.constraints]
    for c in best_constraints_of(deciding):
        words = failing_group([d for d in [*deciding, *path] if d.name == c.name])
        before += words
        after += render_setting(pick) if c.name == pick.constraint.name else words
    return _command(site, knowledge, before, after, own)


def validated(site: Site, knowledge: Knowledge, deciding: Sequence[Constraint]) -> list[Constraint]:
    """What the server-args validation demands of the deciding flags, as constraints a fixed
    value must keep: a fix that the validation rejects only moves the error to startup."""
    out: list[Constraint] = []
    for c in deciding:
        if c.kind != "flag" or c.info is None:
            continue
        for op, values in knowledge.checks_for(site.path, c.info.dest):
            out.append(Constraint("flag", c.name, op, values, c.info))
    return out


_UNSUPPORTED_RE = re.compile(
    r"not (?:yet )?(?:supported|compatible|allowed)|unsupported|incompatible|cannot be (?:used|combined|enabled)",
    re.I,
)


def _switched_on_feature(site: Site, knowledge: Knowledge, name: str) -> bool:
    """Whether ``name`` is a boolean variable that is off unless set and the message says what it
    turns on is unsupported here: leaving it unset is then the fix, not some other value of it."""
    info = knowledge.env_of(name)
    if (
        info is None
        or info.kind != "bool"
        or info.default.strip() not in ("False", "0", "'0'", '"0"', "''", '""')
    ):
        return False
    return bool(_UNSUPPORTED_RE.search(message_text(site)))


def _switch_on_path(roles: Roles, knowledge: Knowledge, site: Site, flag: str) -> bool:
    """Whether ``flag`` is a switch that a test on the path reads as true on its own
    (``server_args.enable_x and ...``): the site is reached only when it is given."""
    info = next((f for v in [*roles.deciding, *roles.gates] for f in v.reads.flags if f.flag == flag), None)
    if info is None or not info.is_bool:
        return False
    for v in [*roles.deciding, *roles.gates]:
        if v.expr is None or info not in v.reads.flags:
            continue
        for part in split_and(simplify(v.expr)):
            if isinstance(part, ast.Attribute) and part.attr == info.dest:
                return True
    return False


def best_constraints_of(cs: Sequence[Constraint]) -> list[Constraint]:
    """One constraint per name, keeping the first that carries values."""
    best: dict[str, Constraint] = {}
    for c in cs:
        if c.name not in best or (c.values and not best[c.name].values):
            best[c.name] = c
    return list(best.values())


def advise(
    site: Site,
    knowledge: Knowledge,
    roles: Roles,
    cause: Cause,
    selectors: Sequence[str] = (),
    constants: Sequence[tuple[str, str]] = (),
    others: Callable[[], Sequence[OtherCheck]] | None = None,
    script_flags: frozenset[str] = frozenset(),
) -> Advice:
    """Solutions, exampleFix, triggerScenarios and commonSituations for ``cause``. ``selectors``
    are extra fixes from outside the function (turning off what selects the site's path);
    ``constants`` the module constants the condition compares with (name, value);
    ``script_flags`` the flags a tool script's own parser declares (a fix on one runs the script)."""
    deciding = [c for v in roles.deciding for c in v.constraints]
    survivors = [c for v in roles.survivors for c in v.constraints]
    survivor_names = {c.name for c in survivors} | {f.flag for v in roles.survivors for f in v.reads.flags}
    envs: dict[str, EnvInfo] = {}
    for c in deciding:
        if c.kind == "env":
            info = knowledge.env_of(c.name)
            if info is not None:
                envs[c.name] = info
    fixed = fixed_settings(deciding, [*survivors, *validated(site, knowledge, deciding)], envs)
    msg = message_text(site)
    advice = _told(msg) if cause.kind != "internal" else []
    told_words = told_setting(advice, knowledge.flags_for(site.path)) if advice else []
    if told_words:
        # "Use --moe-runner-backend flashinfer_cutlass instead": another value of the same flag
        # that merely skips the check would contradict the message's own advice.
        fixed = [_told_first(opts, told_words) for opts in fixed if not _contradicts(opts, told_words)]
    where = _where(site)
    cond = condition_code(roles.deciding)
    avoid = negated_code(roles.deciding)
    ways = _gate_workarounds(roles, survivor_names, knowledge)
    workaround = [w.text for w in ways]
    sols: list[str] = []
    fix = ""
    kind = cause.kind
    passed = passed_on.passed_on_from(site, cause)
    own = frozenset(
        f.flag for v in [*roles.deciding, *roles.gates] for f in v.reads.flags if f.namespace == site.path
    ) | frozenset(n for n in cause.names if n in script_flags)
    if script_flags and not _SERVER_CODE_RE.search(site.path):
        # A benchmark or tool with a parser of its own: the user runs it, not the server.
        own |= {RUNS_ITSELF}
    if kind in ("flag", "env"):
        sols.extend(setting_words(opts) for opts in fixed)
        if fixed:
            fix = _settings_fix(site, knowledge, roles, fixed[0], deciding, own)
            pick = _pick(fixed[0])
            reaching = [c for v in [*roles.gates, *roles.deciding] for c in v.constraints]
            context = launch_values([c for c in reaching if c.name != pick.constraint.name])
            extra = companions(pick, others(), context, survivors) if others is not None else []
            if extra:
                sols[0] = together_words(sols[0], extra)
                fix += " " + " ".join(w for s, _ in extra for w in render_setting(s))
        named = [n for n in cause.names if n.startswith("--") or n.isupper()]
        if cause.rule == "argv-flag":
            sols.extend(_argv_solutions(site, knowledge, roles, named[0], avoid))
        combo = combination_of(msg) if not fixed and named else None
        if combo is not None:
            on = {
                n
                for n in (combo.first, combo.second)
                if (e := knowledge.env_of(n)) is not None and e.on_by_default
            }
            launched = {n for n in (combo.first, combo.second) if knowledge.launches_env(n)}
            sols.extend(combo.solutions(on, launched))
            fix = _command(site, knowledge, *combo.launches(knowledge.flags_for(site.path)), own)
        elif not fixed and cause.rule == "message-flag" and (asked := asked_flag(msg, named, roles)):
            # "X requires --spatial-upsampler-path" where the test is that a value is missing: the
            # launch left the flag out (and nothing filled the value in its place).
            switch = _is_switch(knowledge, site, asked)
            if not advice:
                sols.append(
                    f"Launch with `{asked}`: the message asks for it"
                    if switch
                    else f"Give `{asked}` at launch: the message asks for it, and {where} found no value "
                    f"in its place (`{cond}`)"
                )
            fix = _command(site, knowledge, [], [asked] if switch else [asked, "<value>"], own)
        elif not fixed and named:
            shown = ", ".join(f"`{n}`" for n in named[:3])
            target = f" so that `{avoid}`" if avoid else ""
            # Only when nothing better is known: it restates the check (the rules that say more
            # about the value than the condition, the message's advice or a workaround do).
            unset = not named[0].startswith("--") and (
                told_unset(advice, named[0]) or _switched_on_feature(site, knowledge, named[0])
            )
            # A switch the message names as what this case does not support: leaving it out is
            # the fix (below), not a value of it "so that" the check's own test holds.
            against = (
                named[0].startswith("--")
                and _is_switch(knowledge, site, named[0])
                and _speaks_against(msg, named[0])
            )
            # A model dimension split over the ranks (``hidden_size % tp_size``): another size is a
            # way out as good as dropping the feature that splits it.
            divided = named[0].startswith("--") and any(
                "%" in v.simple and any(f.flag == named[0] for f in v.reads.flags) for v in roles.deciding
            )
            if cause.rule not in ("argv-flag", "model-dtype") and not (
                advice or (workaround and not divided) or unset or against
            ):
                split = _tp_part_split(named, site, knowledge)
                # A parallel size set against the model's config (``tp_size > n_routed_experts``):
                # the other side is the checkpoint's, so the flag is what moves.
                keys = config_keys([v for v in roles.deciding if v.model and v.reads.flags])
                theirs = f" (`{keys[0]}` is the checkpoint's, from its config.json)" if keys else ""
                if split:
                    sols.append(f"Change {split} in the launch command{target}{theirs}")
                else:
                    sols.append(f"Change {shown} in the launch command{target}{theirs}")
            on_path = named[0].startswith("--") and _switch_on_path(roles, knowledge, site, named[0])
            if on_path or against:
                # A switch takes no value: the path needs it given (or the message names it as what
                # the failing launch has), so the fix leaves it out; a message that asks for it given
                # ("pass --disable-x") is read below and wins.
                fix = _command(site, knowledge, [named[0]], [], own)
                if not on_path:
                    sols.append(
                        f"Launch without `{named[0]}`: the message names it as what this case does not support"
                    )
            elif named[0].startswith("--"):
                accepted = (
                    _against_config(named[0], roles) or _bound_word(named[0], roles) or "<accepted-value>"
                )
                fix = _command(site, knowledge, [named[0], "<current-value>"], [named[0], accepted], own)
            elif unset:
                # The message asks for the variable gone: no value of it is the accepted one.
                sols.append(f"Unset `{named[0]}` (leave it out of the launch environment)")
                fix = _command(site, knowledge, [f"{named[0]}=<current-value>"], [])
            elif (env_way := next((w for w in ways if w.env == named[0]), None)) is not None:
                if env_way.on_by_default:
                    # On by default: the fix turns it off.
                    fix = _command(site, knowledge, [], [f"{named[0]}=0"])
                else:
                    # The check runs only while the variable is set: the fix leaves it out.
                    info = knowledge.env_of(named[0])
                    value = "1" if info is not None and info.kind == "bool" else "<current-value>"
                    fix = _command(site, knowledge, [f"{named[0]}={value}"], [])
            else:
                # An environment variable is set in front of the launcher, never passed as an argument.
                fix = _command(
                    site, knowledge, [f"{named[0]}=<current-value>"], [f"{named[0]}=<accepted-value>"]
                )
            told = told_setting(advice, knowledge.flags_for(site.path))
            if told:
                # The message says what to pass ("pass --disable-x"): the fix adds exactly that.
                gate = _gate_words(roles)
                # The failing launch gives the value the check refuses (``--kv-cache-dtype fp4_e2m1``).
                given = next(
                    (failing_words(c) for c in deciding if c.name == told[0] and c.op in ("eq", "in")), []
                )
                fix = _command(site, knowledge, [*gate, *given], [*gate, *told], own)
        md = (
            model_dtype(site, roles.deciding, knowledge.flags_for(site.path))
            if cause.rule == "model-dtype"
            else None
        )
        if md is not None:
            flag, want = md.flag.flag, md.accepted[0]
            sols.insert(
                0,
                f"Serve with `{flag} {want}`: {_where(site)} needs {' or '.join(md.accepted)} tensors, and "
                f"the model runs in the dtype `{flag}` selects (with `auto`, the checkpoint's own)",
            )
            fix = _command(site, knowledge, [flag, md.rejected], [flag, want])
        share = split_share(roles.deciding, knowledge.flags_for(site.path))
        if share is not None and share[0] in cause.names:
            # Each rank's share of the layer must fit the divisor (a quantization block, a
            # kernel's tile): fewer ranks give larger shares.
            flag, part, by = share
            # It says what the restated check ("Change `--tp-size` ... so that ...") would.
            sols = [x for x in sols if not x.startswith(f"Change `{flag}` in the launch command")]
            sols.insert(
                0,
                f"Use a smaller `{flag}`: each rank holds `{part}`, this layer's size divided by it, "
                f"which must be a multiple of `{by}`",
            )
            if _no_change(fix) or "<accepted-value>" in fix:
                fix = _command(site, knowledge, [flag, "<current-value>"], [flag, "<a smaller size>"], own)
        for v in roles.deciding:
            typed = v.isinstance_
            if typed is not None and not typed[2] and v.reads.flags:
                flag = v.reads.flags[0].flag
                sample = _TYPE_SAMPLES.get(typed[1][0].rsplit(".", 1)[-1])
                if sample is not None:
                    sols.insert(0, f"Give `{flag}` a {typed[1][0]} value, e.g. `{flag} {sample}`")
            if v.model and not v.reads.flags and v.neg:
                sols.append(f"Or use a model for which `{v.neg}`: the check needs all of its conditions")
        sols[:0] = advice
        sols.extend(workaround)
    elif kind == "model":
        hv = handled_values(roles.deciding)
        # "checkpoint" and "config.json" name the whole model or its config, not a key of it.
        keys = [n for n in cause.names if n not in ("checkpoint", "config.json")]
        setter = ""
        if cause.rule == "weights":
            arch = (site.in_class or "this model").rsplit(".", 1)[-1]
            sols.append(
                f"Use a checkpoint made for `{arch}`: its weight names do not match what `{arch}` "
                "defines (another variant, a partial download or a wrong --model-path)"
            )
        elif cause.rule == "no-weights":
            # Only the flags this code's own command line declares (a diffusion server has no
            # ``--load-format``).
            flags = knowledge.flags_for(site.path)
            said = [
                words
                for flag, words in (
                    ("--revision", "`--revision` picks another revision of a repo"),
                    ("--load-format", "`--load-format` another weight format"),
                )
                if _spelled(flag, flags) is not None
            ]
            sols.append(
                "Point `--model-path` at a directory or Hugging Face repo that holds the weight files "
                "(`*.safetensors`, `*.bin`), or finish the download"
                + (f"; {', '.join(said)}" if said else "")
            )
        elif cause.rule == "message-checkpoint" or (
            cause.rule == "parsed-checkpoint-config" and "draft model" in cause.names
        ):
            text, setter = _checkpoint_fix(site, knowledge, cause)
            sols.append(text)
        elif hv is not None and len(hv[1]) >= 1:
            subject, values = hv
            key = subject.rsplit(".", 1)[-1]
            # A parameter the callers fill from the config is named by its config key.
            key = config_key_of(site, subject) or next(
                (k for k in keys if k == key or k.endswith("." + key)), key
            )
            if cause.rule in ("config-entry", "config-attribute") and len(keys) == 1:
                key = keys[0]  # the local (or attribute) holds that entry of the config
            # A local read straight from the config (``n = self.config.num_nextn_predict_layers``)
            # is named by its key.
            key = bound_config_key(site, subject) or key

            if cause.rule == "from-config" and len(cause.names) > 1:
                # The class is built from these keys of the checkpoint's config (any spelling).
                held = " or ".join(f"`{k}`" for k in cause.names[1:4])
                wanted = (
                    f"to {values[0]}: the only value"
                    if len(values) == 1
                    else f"to one of {', '.join(values)}: only those are"
                )
                sols.append(f"Use a checkpoint whose `{cause.names[0]}` sets {held} {wanted} supported here")
            else:
                sols.append(
                    f"Use a model whose `{key}` is one of {', '.join(values)}: only those are supported here"
                )
        elif keys and cause.rule == "built-from-config" and cause.names[:1] == ("checkpoint",):
            # The names are what the layer keeps, filled from the config as it is built: not
            # keys one can look up in config.json under those names.
            read = ", ".join(f"`{k}`" for k in keys[:3])
            sols.append(
                f"Use a checkpoint whose config builds this layer with other values: the check reads {read}, "
                f"which `{site.in_class or where}` sets from the config it is given"
                + (f", so that `{avoid}`" if avoid else "")
            )
        elif keys and (absent := missing_keys(roles)):
            # ``not hasattr(config, "head_dim") and not hasattr(config, "attention_head_dim")``: any
            # one of them set passes.
            either = " (or ".join(f"`{k}`" for k in absent) + ")" * (len(absent) - 1)
            sols.append(
                f"Add {either} to the checkpoint's config.json with the model's real value: {where} "
                "needs it and the config leaves it out (or use a checkpoint whose config sets it)"
            )
        elif keys:
            sols.append(
                f"Use a checkpoint whose config.json sets {', '.join(f'`{k}`' for k in keys[:3])} so that `{avoid}`"
                if avoid
                else f"Use a checkpoint whose config provides {', '.join(f'`{k}`' for k in keys[:3])}"
            )
        elif avoid and "config.json" in cause.names:
            sols.append(f"Use a checkpoint whose config.json passes this check, so that `{avoid}`")
        elif cond:
            sols.append(f"Use a checkpoint this code supports (the check is `{cond}`)")
        else:
            sols.append(
                f"Use a checkpoint this code supports: {where} raises this on every call that reaches it"
            )
        gate_avoid = negated_code(roles.gates)
        if keys and gate_avoid and cause.rule == "config-class":
            sols.append(
                f"Or change the checkpoint's config so that `{gate_avoid}` (the check only runs otherwise)"
            )
        sols[:0] = advice
        sols.extend(workaround)
        path_flag = setter or "--model-path"
        fix = _command(
            site,
            knowledge,
            [path_flag, "<this-checkpoint>"],
            [path_flag, "<a-supported-checkpoint>"],
        )
    elif kind == "hardware" and cause.rule == "driver-error":
        lib = cause.names[0]
        libs = "CUDA libraries" if lib == "CUDA" else f"CUDA and {lib} libraries"
        if lib == "NCCL":
            sols.append(
                "Rerun with `NCCL_DEBUG=INFO` to see what NCCL failed on: a network interface it cannot use "
                "(set `NCCL_SOCKET_IFNAME`), a peer rank that exited first (its own log says why), or a GPU "
                "or driver problem"
            )
        sols.append(
            f"The {lib} library reported this failure; the message is its own error string. Check the GPU "
            f"and its driver: `nvidia-smi` lists the GPUs, the driver is as new as the {libs} of the "
            "environment need, and no GPU has fallen off the bus (Xid errors in `dmesg`). A GPU that does "
            'not support the call ("Not Supported") cannot answer it'
        )
        sols.append(
            "If the driver was updated or a GPU was reset, restart the node or the container, then retry"
        )
        sols[:0] = advice
        sols.extend(workaround)
        fix = (
            f"# before: {lib} fails in {where}\n{launcher(site, knowledge)}\n"
            "# after: check the GPUs and the driver first\nnvidia-smi"
        )
    elif kind == "hardware" and cause.names == (CAPABILITY,):
        minimum = capability_minimum(site, roles)
        # "SGLang only supports sm75 and above": the message's own number, when the code names none.
        sm = _SM_RE.search(msg) if not minimum else None
        bound = _capability_bound(roles) if not minimum and not sm else ""
        least = (
            f" (`{minimum}`)" if minimum else f" (sm{sm.group(1)})" if sm else f" ({bound})" if bound else ""
        )
        sols[:0] = [
            *advice,
            f"Run on a newer GPU: {where} needs a compute capability at least the minimum it checks for"
            f"{least}, and this GPU's is below it",
            *workaround,
        ]
        base = launcher(site, knowledge)
        fix = f"# before: on a GPU below that compute capability\n{base}\n# after: the same launch on a newer GPU\n{base}"
    elif kind == "hardware":
        hw = ", ".join(cause.names)
        fails_on = [v for v in roles.deciding if v.hardware and not wants_hardware(v)]
        needs = [v for v in roles.deciding if v.hardware and wants_hardware(v)]
        if fails_on and not needs:
            # ``is_hip() and x not in supported``: the check fails *on* this platform.
            rest = [v.neg for v in roles.deciding if not v.hardware and v.neg]
            also = f", or meet the rest of the check there (`{' or '.join(rest)}`)" if rest else ""
            sols.append(f"This check fails on {hw}: run on other hardware{also}")
        else:
            sols.append(f"Run on {hw} hardware: this path needs it")
        alts = alternatives(site, knowledge, roles)
        for alt in alts[:2]:
            now = f" instead of {'/'.join(alt.current)}" if alt.current else ""
            sols.append(
                f"Or pick another `{alt.flag}`{now}, one this device supports: it accepts {', '.join(alt.others)}"
            )
        sols[:0] = advice
        # The declared choices say more than "pick another value" for the same flag.
        sols.extend(w for w in workaround if not any(f"`{a.flag}`" in w for a in alts))
        gate_words = _gate_words(roles)
        if gate_words:
            fix = _command(site, knowledge, gate_words, [])
        else:
            # Nothing in the command changes: the machine does, and the example says so.
            base = launcher(site, knowledge)
            if fails_on and not needs:
                fix = f"# before: on {hw}\n{base}\n# after: the same launch on other hardware\n{base}"
            else:
                fix = f"# before: on a machine without {hw}\n{base}\n# after: the same launch on {hw} hardware\n{base}"
        if alts:
            alt = alts[0]
            before = [w for w in _gate_words(roles) if w not in alt.current and w != alt.flag]
            fix = _command(
                site,
                knowledge,
                [*before, alt.flag, alt.current[0] if alt.current else "<current>"],
                [*before, alt.flag, alt.others[0]],
            )
        if _no_change(fix):
            # Nothing on the command line changes: the machine does.
            base = _command(site, knowledge, _gate_words(roles), _gate_words(roles)).split("\n")[1]
            where = f"on {hw}" if fails_on and not needs else f"without {hw}"
            there = f"on hardware other than {hw}" if fails_on and not needs else f"on {hw} hardware"
            fix = f"# before: {where}\n{base}\n# after: the same launch {there}\n{base}"
    elif kind == "dependency":
        named = [p for p in cause.names if not p.startswith("-")]
        # A dotted module path (``cuda.bindings``) is what the import asked for, not what pip
        # installs: the distribution the message or the import names beside it is.
        pkgs = [p for p in named if "." not in re.split(r"[<>=!~\[]", p, maxsplit=1)[0]] or named
        # A message that asks for a newer version needs -U: plain ``pip install`` keeps the old one.
        upgrade = bool(_UPGRADE_RE.search(msg))
        reinstall = cause.rule == "own-extension"
        unknown: list[str] = []
        if not reinstall:
            pkgs, unknown = _distributions(pkgs, msg, knowledge)
        verb = (
            "pip install --force-reinstall "
            if reinstall
            else "pip install -U "
            if upgrade
            else "pip install "
        )
        line = verb + " ".join(f"'{p}'" if any(ch in p for ch in "<>=[") else p for p in pkgs[:3])
        if reinstall:
            sols.append(
                f"Reinstall `{pkgs[0]}`, the package {where} belongs to: its compiled part did not load "
                f"(a build for another CUDA/driver or platform, or an incomplete install): `{line}`"
            )
        elif pkgs and upgrade:
            sols.append(f"Upgrade the package: `{line}`, then restart")
        elif pkgs:
            sols.append(f"Install the missing package: `{line}`, then restart")
        elif not unknown and "{" in msg and re.search(r"version", msg, re.I):
            # The package is a parameter (``{pkg} ... is not installed``): the message the user
            # reads names it, and the version it needs.
            sols.append(
                "Install the package the message names, at least at the version it states "
                "(`pip install '<package>>=<version>'`), then restart"
            )
        elif not unknown:
            sols.append(f"Install the package that {where} imports, then restart")
        for name in unknown:
            # Not among the target's declared requirements: the module's own name on PyPI may be
            # an unrelated project, so no pip line is guessed.
            sols.append(
                f"{'Upgrade' if upgrade else 'Install'} the package that provides the `{name}` module "
                f"(sglang's package metadata does not declare it, so `pip install {name}` may fetch "
                "an unrelated project: install it from its own project's instructions), then restart"
            )
        driver = _DRIVER_RE.search(msg)
        if driver is not None:
            # A driver is no package: no reinstall brings a newer one.
            wanted = driver.group(1)
            # ``12.4`` is a CUDA version the driver must support; ``535`` the driver's own version.
            what = f"supports CUDA {wanted}" if "." in wanted else f"is version {wanted}"
            sols.insert(
                0,
                f"Check the NVIDIA driver first: the message asks for one that {what} or newer "
                "(`nvidia-smi` prints both); update the driver, or use a build of the package made for "
                "the CUDA version you have",
            )
        sols[:0] = advice
        base = launcher(site, knowledge)
        after = (
            line
            if pkgs
            else f"# install the package providing `{unknown[0]}`"
            if unknown
            else "pip install <package>"
        )
        fix = f"# before\n{base}\n# after\n{after}\n{base}"
    elif kind == "input" and cause.rule == "adapter-limit":
        sols[:0] = advice
        sols.append(
            "The LoRA adapter being loaded is of a kind this server does not support, as the message "
            "says: load another adapter made without that feature, or merge this one into the base "
            "model and serve the merged checkpoint without LoRA"
        )
        sols.extend(workaround)
        base = launcher(site, knowledge, False)
        lora_paths = declared_flag("--lora-paths", knowledge.flags_for(site.path)) is not None
        fix = (
            (
                f"# before: an adapter of the kind the message names\n{base} --lora-paths <this-adapter>\n"
                f"# after: an adapter without it (or the merged model as --model-path)\n"
                f"{base} --lora-paths <another-adapter>"
            )
            if lora_paths
            else f"# before: loading an adapter of the kind the message names\n{call_of(site)}\n"
            f"# after: load another adapter made without it\n{call_of(site)}"
        )
    elif kind == "input" and cause.rule == "parsed-config":
        entries, given = _parsed_parts(cause, site)
        by = f" given as `{given[0]}`" if given else ""
        want = f" so that `{avoid}`" if avoid else ""
        sols.append(f"Correct the {entries} entry of the data{by} (JSON, YAML or TOML){want}")
        sols[:0] = advice
        call = call_of(site)
        fix = f"# before: data whose {entries} entry makes `{cond}` true\n{call}\n# after: the same call with that entry corrected{want}\n{call}"
    elif kind == "input" and cause.rule == "message-option":
        options = ", ".join(f"`{n}`" for n in cause.names[:3])
        sols[:0] = advice
        sols.append(
            f"Give {options} as the message says to the command, script or request that takes them: no "
            f"parser of the server's launch declares them, so they are no `{launcher(site, knowledge, False).split(' --')[0]}` flags"
            + (f" (the check needs `{avoid}`)" if avoid else "")
        )
        call = call_of(site)
        fix = (
            f"# before: {options} given so that `{cond}`\n{call}\n"
            f"# after: the same call with them given so that {f'`{avoid}`' if avoid else 'the check passes'}\n{call}"
        )
    elif kind == "input":
        fields = [n for n in cause.names if n != "request"]
        subject = (
            "the value"
            if cause.rule == "format"
            else ", ".join(f"`{f}`" for f in fields[:3]) or "the request"
        )
        specific = _input_solutions(site, roles, cause, constants, subject, cond)
        sols.extend(specific)
        if specific or advice:
            pass  # said above, or by the message: restating the test adds nothing
        elif avoid:
            sols.append(f"Send {subject} so that `{avoid}` (this check rejects it otherwise)")
        else:
            # With no field to name (a handler that turns the parser's error into a response), the
            # message the user gets back is what says which part to fix.
            sols.append(
                f"Fix {subject} in the request"
                if subject != "the request"
                else "Fix the request: the error message it gets back says which part is rejected"
            )
        sols[:0] = advice
        call = call_of(site)
        before_call = f"a request/call for which `{cond}`" if cond else f"a request/call that {where} rejects"
        passes = f"`{avoid}`" if avoid else "the check passes"
        fix = f"# before: {before_call}\n{call}\n# after: the same call with {subject} fixed so that {passes}\n{call}"
        if cause.rule == "unknown-keys":
            flag = fields[0] if fields and fields[0].startswith("--") else ""
            fix = (
                _command(
                    site,
                    knowledge,
                    [flag, "'<JSON with a key the message lists>'"],
                    [flag, "'<the same JSON without it>'"],
                )
                if flag
                else f"# before: {subject} holds a key the message lists\n{call}\n"
                f"# after: the same data without it (or with the key spelled as the code expects)\n{call}"
            )
        if cause.rule == "unknown-entry":
            fix = (
                f"# before: the data passed in gives {subject} a value the code does not know\n{call}\n"
                f"# after: the same data with {subject} set to one of the names the code knows\n{call}"
            )
        if cause.rule == "missing-path":
            fix = (
                f"# before: a path that does not exist where the server runs\n{call}\n"
                f"# after: check the path on the server's host, then pass it again\nls -ld <path>\n{call}"
            )
    elif passed is not None:
        sols.extend(advice)
        sols.extend(passed_on.solutions(passed))
        sols.extend(workaround)
        fix = passed_on.example_fix(passed, call_of(site), launcher(site, knowledge))
    elif kind == "resource" and cause.rule == "timeout":
        sols.extend(advice)
        sols.extend(_waiting_solutions(cause))
        fix = _waiting_fix(site, knowledge, cause)
    elif kind == "resource":
        sols.extend(advice)
        sols.append(
            f"Free or add capacity for {where} ({', '.join(cause.names)}): fewer concurrent requests, a smaller batch or context, or more devices"
        )
        fix = (
            _command(site, knowledge, ["--mem-fraction-static", "0.9"], ["--mem-fraction-static", "0.8"])
            if "memory" in cause.names
            else ""
        )
    elif is_limit(site):
        sols.extend(_told(msg))
        sols.append(
            f"{INTERNAL_CHECK}{where} for a case it does not support, as its message says: avoid that case "
            "(another backend, model or input where the message names one). If nothing you chose leads "
            "here, report it to sglang with the full message and traceback, the launch command, the model "
            "and the output of `python3 -m sglang.check_env`"
        )
        sols.extend(workaround)
        sols.extend(selectors)
        fix = (
            f"# before: {call_of(site)} meets a case it does not support\n"
            "# after: avoid the case its message names; if nothing you chose leads there, collect what a "
            "report needs\npython3 -m sglang.check_env"
        )
    else:
        # What the message itself asks for comes first: its author knew a way out.
        sols.extend(_told(msg))
        sols.append(
            f"{INTERNAL_CHECK}{where}: {NOT_EXPECTED}. Report it to sglang as a bug with the full message and traceback, "
            "the launch command, the model and the output of `python3 -m sglang.check_env`"
        )
        for h in site.guard.handlers[:1]:
            sols.insert(
                0,
                f"Look at the `{h}` that {where} caught and turned into this error: it is chained as the "
                "cause in the traceback and says what failed underneath",
            )
        sols.extend(workaround)
        sols.extend(selectors)
        fix = (
            f"# before: {call_of(site)} reaches an internal state the code does not expect\n"
            "# after: collect what a bug report needs\npython3 -m sglang.check_env"
        )
    if (
        kind == "internal"
        and site.error_class.endswith("NotImplementedError")
        and not roles.deciding
        and not private_owner(site)
    ):
        fix = code_fix(site, [])
        hook = overridable_hook(site)
        if hook is not None:
            base, meth = hook
            # The fix shows the subclass: the solutions say whose subclass that is.
            sols.append(
                f"If the object is of a class of your own derived from `{base}` (a plugin or an "
                f"extension of sglang), implement `{meth}` in it: `{base}` leaves it to its subclasses"
            )
    if kind != "internal":
        sols.extend(selectors)
    if not fix:
        fix = f"# before\n{call_of(site)}\n# after\n# apply: {sols[0] if sols else 'see solutions'}"
    trigger = _trigger(site, roles, cause, fixed, cond, passed)
    if kind == "flag":
        refused = refused_values(deciding)
        if refused:
            trigger = refused_trigger(trigger, refused, own)
            fix = fix.replace("# before\n", f"{REFUSED_BEFORE}\n", 1)
    situations = situations_of(site, roles, cause, cond)
    return Advice(
        solutions=_first_not_an_alternative(list(dict.fromkeys(sols))[:8]),
        example_fix=fix,
        trigger=trigger,
        situations=situations,
        cause_sentence=_cause_sentence(cause, site, passed),
    )


def _spelled(flag: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The first flag spelled ``flag`` itself (not as an alias)."""
    # Through the lookup by spelling first: a file's cached result is kept under what it read,
    # and scanning every flag reads them all. The first flag spelled so either way is the first
    # spelled so itself unless an alias came first.
    first = declared_flag(flag, flags)
    if first is None or first.flag == flag:
        return first
    return find_flag("itself", flag, flags)


def _argv_solutions(site: Site, knowledge: Knowledge, roles: Roles, flag: str, avoid: str) -> list[str]:
    """For a check in code that reads ``flag`` straight from the command line: what the value
    given with it (or the file it names) must satisfy. A membership test on what that file holds
    means an entry the code cannot take from the file, which the command line still accepts."""
    target = f" (or the file it names) so that `{avoid}`" if avoid else ""
    out = [
        f"Correct the value given with `{flag}`{target}: {_where(site)} reads it straight from "
        "the command line, before the other flags are parsed"
    ]
    info = _spelled(flag, knowledge.flags_for(site.path))
    names_file = info is not None and re.search(r"\b(file|path|yaml|json)\b", info.help, re.I)
    membership = any(
        isinstance(v.expr, ast.Compare) and isinstance(v.expr.ops[0], ast.In | ast.NotIn)
        for v in roles.deciding
    )
    if names_file and membership:
        out.append(
            f"Or leave that entry out of the file given with `{flag}` and pass the option on the "
            "command line instead, where it is parsed as usual"
        )
    return out


def _first_not_an_alternative(sols: list[str]) -> list[str]:
    """A workaround worded as an alternative ("Or launch without ...") that ends up first reads
    as the first choice."""
    if sols and sols[0].startswith("Or "):
        rest = sols[0][3:]
        sols[0] = rest[:1].upper() + rest[1:]
    return sols


def _input_solutions(
    site: Site,
    roles: Roles,
    cause: Cause,
    constants: Sequence[tuple[str, str]],
    subject: str,
    cond: str,
) -> list[str]:
    """What the caller's data must be: a unique id, a form the loader accepts, the markers a
    parser looks for."""
    where = _where(site)
    out: list[str] = []
    if cause.rule == "format" and (m := FORMAT_RE.search(message_text(site))) is not None:
        form = m.group("form").strip().rstrip(".")
        out.append(
            f"Give the value in the form the message states ({form}): the one passed in, a launch "
            "setting or request field, does not parse that way"
        )
    if cause.rule == "missing-path":
        named = [n for n in cause.names if n != "path"]
        what = ", ".join(f"`{n}`" for n in named) or "the path in the message"
        out.append(
            f"Pass a path that exists: {what} must name a file or folder the server process can read "
            "where it runs (a relative path resolves against its working folder; in a container, the path "
            "inside it)"
        )
    if cause.rule == "duplicate-id":
        out.append(
            f"Give every request its own {subject}: {where} already holds one with this value "
            f"(`{cond}`), so a retried or replayed request must get a new {subject}"
        )
    if cause.rule == "unknown-keys":
        allowed = _accepted_keys(site)
        keeping = f"; {where} accepts {', '.join(f'`{k}`' for k in allowed)}" if allowed else ""
        out.append(f"Remove or rename the keys of {subject} that the message lists{keeping}")
    if cause.rule == "unknown-entry":
        out.append(
            f"Correct {subject} in the data {where} reads (the file or payload passed to it): the "
            "message shows the value, and it is not one of the names the code knows"
        )
    param = data_param(site, roles.deciding) if cause.rule == "caller-data" else None
    if param is not None:
        types = accepted_types(param, roles.gates)
        if len(types) > 1:
            out.append(
                f"Pass `{param.name}` in a form {where} accepts: {', '.join(types)} "
                f"(its annotation and the branches before this check); it fails when `{cond}`"
            )
        if constants:
            marks = "; ".join(f"`{n}` = `{v}`" for n, v in constants[:3])
            out.append(
                f"Pass the whole `{param.name}`, with the markers {where} looks for ({marks}): "
                "a text cut short or edited before them fails this check"
            )
    return out


def _accepted_keys(site: Site) -> list[str]:
    """The keys a ``set(cfg) - ALLOWED`` check accepts, when ``ALLOWED`` is a literal bound in
    the function (``allowed = {"a", "b"}``)."""
    values = {b.name: b.value for b in site.guard.bindings if b.value is not None}
    for value in values.values():
        found = keys_checked(value)
        known = found[1] if found is not None else None
        if isinstance(known, ast.Name):
            known = values.get(known.id)
        elts = known.keys if isinstance(known, ast.Dict) else getattr(known, "elts", None)
        if isinstance(known, ast.Set | ast.List | ast.Tuple | ast.Dict) and elts:
            keys = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if keys and len(keys) == len(elts):
                return keys[:12]
    return []


def _waiting_solutions(cause: Cause) -> list[str]:
    """A peer, service or lock that did not answer in time (``timeout``), or a download that
    failed (``network``)."""
    if cause.names[:1] == ("network",):
        return [
            "Check network access from the server to the source the message names (proxy settings, "
            "a mirror), or download the files in advance and pass their local path instead"
        ]
    out = [
        "Check that what it waits for (a peer process or service, a lock holder, a compilation) is "
        "running, reachable from this host and not stuck or overloaded; its own log says why it did "
        "not finish in time"
    ]
    for setting in cause.names[1:3]:
        out.append(f"Or give it more time: raise `{setting}`")
    return out


def _waiting_fix(site: Site, knowledge: Knowledge, cause: Cause) -> str:
    setting = next(iter(cause.names[1:]), "")
    if setting.startswith("--"):
        return _command(site, knowledge, [setting, "<current-seconds>"], [setting, "<more-seconds>"])
    if setting:
        return _command(site, knowledge, [f"{setting}=<current-seconds>"], [f"{setting}=<more-seconds>"])
    return ""


# A value of each type as a command line writes it, for a check ``isinstance(flag_value, T)``.
_TYPE_SAMPLES = {
    "dict": """'{"key": "value"}'""",
    "list": """'["a", "b"]'""",
    "int": "1",
    "float": "1.0",
    "str": "<text>",
}


KIND_WORDS = {
    "flag": "a launch flag",
    "env": "an environment variable",
    "model": "the model (its checkpoint or config)",
    "hardware": "the hardware or platform",
    "dependency": "an installed package",
    "input": "the request or call input",
    "resource": "a resource limit",
}


def _tp_part_split(named: Sequence[str], site: Site, knowledge: Knowledge) -> str:
    """The flags that size a part of the tensor-parallel group (:data:`TP_PARTS`), said as how they
    combine (``--tp-size``, divided by ``--dp-size`` only under DP attention, or by ``--ep-size``
    and ``--moe-dp-size`` for the MoE layers); ``""`` when ``named`` is not those."""
    if is_knowledge_path(site.path):
        return ""  # the launch code reads the flags themselves, not the group's size
    flags = knowledge.flags_for(site.path)
    tp = flags.get("tp_size")
    if tp is None or named[:1] != [tp.flag]:
        return ""
    for part, splits, under_dest in TP_PARTS:
        first, *more = (flags.get(d) for d in splits)
        if first is None or first.flag not in named:
            continue
        under = ""
        if under_dest:
            switch = flags.get(under_dest)
            under = f" under `{switch.flag}`" if switch is not None else " under DP attention"
        rest = "".join(f" and by `{f.flag}`" for f in more if f is not None and f.flag in named)
        return f"`{tp.flag}` (the {part} part is it divided by `{first.flag}`{under}{rest})"
    return ""


def _parsed_parts(cause: Cause, site: Site) -> tuple[str, list[str]]:
    """The entries (keys, as code) and the parameters a ``parsed-config`` cause names."""
    params = {p.name for p in site.params}
    keys = [n for n in cause.names if n not in params]
    given = [n for n in cause.names if n in params]
    return ", ".join(f"`{k}`" for k in keys[:4]), given


_SM_RE = re.compile(r"\bsm_?(\d{2,3}[a-z]?)\b", re.I)


def _capability_bound(roles: Roles) -> str:
    """The capability the test itself names as the bound (``get_device_capability()[0] < 9``
    gives ``9.0``; ``get_device_capability() < (8, 9)`` gives ``8.9``), or ``""``."""
    for v in roles.deciding:
        expr = simplify(v.expr) if v.expr is not None else None
        for node in ast.walk(expr) if expr is not None else ():
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt)):
                continue
            left, right = node.left, node.comparators[0]
            if not any(
                isinstance(n, ast.Call) and called_name(n) == "get_device_capability" for n in ast.walk(left)
            ):
                continue
            major = (
                isinstance(left, ast.Subscript)
                and isinstance(left.slice, ast.Constant)
                and left.slice.value == 0
            )
            if major and isinstance(right, ast.Constant) and type(right.value) is int:
                return f"{right.value}.0"
            if (
                isinstance(right, ast.Tuple)
                and len(right.elts) == 2
                and all(isinstance(e, ast.Constant) and type(e.value) is int for e in right.elts)
            ):
                first, second = (ast.unparse(e) for e in right.elts)
                return f"{first}.{second}"
    return ""


def _cause_sentence(cause: Cause, site: Site, passed: passed_on.PassedOn | None) -> str:
    if cause.rule == PLATFORM_RULE:
        return (
            "Cause: an internal invariant: every way into this code runs on the platform this check asks "
            "for already (sglang registers or builds it there alone), so the check should not fail; "
            "reaching it is a bug, not a matter of the machine."
        )
    if cause.rule == DEVICE_RULE:
        return (
            "Cause: an internal invariant: the path runs only on the device this check asks for, so "
            "the check fails only when a caller hands over a tensor kept on another device (such as "
            "the CPU); reaching it is a bug, not a matter of the machine."
        )
    if cause.kind == "internal" and is_limit(site):
        return LIMIT_CAUSE
    if cause.kind == "internal":
        return "Cause: an internal invariant, not a setting the user controls; reaching it is a bug."
    if passed is not None:
        return passed_on.cause_sentence(passed)
    names = ", ".join(f"`{n}`" for n in cause.names[:6])
    if cause.rule == "unknown-entry":
        return f"Cause: the data passed in (a file or payload): its {names} entry holds a value the code does not know."
    if cause.rule == "unknown-keys":
        whose = f"the value of {names}" if names.startswith("`--") else f"{names}, the data passed in"
        return f"Cause: {whose} (a config file, JSON text or payload) has keys the code does not accept."
    if cause.rule == "adapter-limit":
        return "Cause: the LoRA adapter being loaded, of a kind this code does not support (the message says which)."
    if cause.rule == "format":
        return (
            "Cause: the value handed in (a launch setting, a request field or an argument) is not in the "
            "form the message states."
        )
    if cause.rule == "driver-error":
        return (
            f"Cause: the GPU driver: its {names} library reported a failure (a driver that does not match "
            "the libraries, a GPU that is lost or does not support the call), not sglang's own state."
        )
    if cause.rule == "parsed-config":
        entries, given = _parsed_parts(cause, site)
        by = f" (`{'`, `'.join(given)}`)" if given else ""
        return f"Cause: the JSON, YAML or TOML data (a file or text) handed in{by}, which this code parses: its {entries} entry."
    if cause.kind == "model":
        names = ", ".join(f"`{n}`" for n in model_words(cause.names)[:6])
    return f"Cause: {KIND_WORDS[cause.kind]}" + (f" ({names})." if names else ".")


# Words a model cause carries that name no part of the checkpoint to look at: the whole thing,
# said already by "the model (its checkpoint or config)".
_NO_PART = frozenset({"checkpoint", "model", "config.json", "model config", "config"})


def model_words(names: Sequence[str]) -> list[str]:
    """The names of a model cause that point at a part of it (a config key, a file, an architecture)."""
    return [n for n in names if n not in _NO_PART]


def _trigger(
    site: Site,
    roles: Roles,
    cause: Cause,
    fixed: list[list[Setting]],
    cond: str,
    passed: passed_on.PassedOn | None,
) -> str:
    deciding = [c for v in roles.deciding for c in v.constraints]
    gates = " ".join(_gate_words(roles))
    where = scope_name(site)
    if cause.kind in ("flag", "env") and deciding:
        path = [c for v in [*roles.gates, *roles.survivors] for c in v.constraints]
        words = " ".join(failing_launch(deciding, path)[:8])
        ctx = f" together with `{gates}`" if gates else ""
        if not words:
            # The failing launch is one that leaves the setting out (``x is None``, ``not x``).
            unset = ", ".join(f"`{n}`" for n in dict.fromkeys(c.name for c in deciding))
            head = f"Launching with `{gates}` but without {unset}" if gates else f"Launching without {unset}"
            if any(filled_at_launch(c) for c in deciding):
                # ``if x is None: x = 48`` in a launch hook: leaving it out is not enough everywhere.
                head += " (where the launch does not fill it in itself)"
            return f"{head} makes {where} raise it (the check is `{cond}`)."
        return f"Launching with `{words}`{ctx} makes {where} raise it (the check is `{cond}`)."
    if cause.kind in ("flag", "env"):
        # The named settings may be the way out (the message's own advice), not what was given.
        named = ", ".join(f"`{n}`" for n in cause.names[:4])
        if not cond:
            return f"A launch whose settings ({named}) {where} rejects."
        return f"A launch for which `{cond}` holds in {where} (settings involved: {named})."
    if cause.rule == "no-weights":
        return (
            f"Loading from a `--model-path` that holds no weight files {where} can read (a wrong path, "
            "an unfinished download, or weights in another format)."
        )
    if cause.kind == "model":
        reads = ", ".join(model_words(cause.names)[:4]) or "its config"
        if not cond:
            return f"Loading a model whose config ({reads}) {where} does not accept."
        return f"Loading a model for which `{cond}` holds in {where} (it reads {reads})."
    if cause.rule == "driver-error":
        return f"The {cause.names[0]} library answering {where} with an error code (its message says which)."
    if cause.kind == "hardware" and cause.names == (CAPABILITY,):
        return f"Running on a GPU whose compute capability is below the minimum {where} checks for (`{cond or 'the device check'}` holds)."
    if cause.kind == "hardware" and fails_on_hardware(roles.deciding):
        return f"Running on {', '.join(cause.names)}, where `{cond or 'the device check'}` holds in {where}."
    if cause.kind == "hardware":
        return f"Running on a platform without {', '.join(cause.names)} support, so `{cond or 'the device check'}` holds in {where}."
    if cause.kind == "dependency" and cause.rule == "own-extension":
        pk = ", ".join(cause.names)
        return (
            f"Running {where} where the compiled part of {pk} does not load (built for another CUDA, "
            "driver or platform, or installed incompletely)."
        )
    if cause.kind == "dependency":
        pk = ", ".join(cause.names) or "a package it imports"
        return f"Running {where} in an environment without {pk} (or with a version it does not accept)."
    if cause.kind == "input" and cause.rule == "format":
        held = f" (`{cond}` holds)" if cond else " (its parse fails)"
        return f"Passing {where} a value that is not in the form its message states{held}."
    if cause.kind == "input" and cause.rule == "adapter-limit":
        return (
            f"Loading a LoRA adapter (at launch with `--lora-paths`, or through the endpoint that loads "
            f"one) of a kind {where} does not support (`{cond or 'the check'}`)."
        )
    if cause.kind == "input" and cause.rule == "unknown-entry":
        keys = ", ".join(f"`{n}`" for n in cause.names[:3])
        return f"The data {where} reads (a file or payload passed to it) gives {keys} a value the code does not know."
    if cause.kind == "input" and cause.rule == "parsed-config":
        entries, given = _parsed_parts(cause, site)
        by = f" handed to {where} as `{given[0]}`" if given else f" {where} reads"
        return f"JSON, YAML or TOML data{by} whose {entries} entry makes `{cond or 'the check'}` true."
    if cause.kind == "input" and cause.rule == "request-object" and site.in_class:
        test = f"`{cond}` holds" if cond else "the check fails"
        fields = ", ".join(f"`{n}`" for n in cause.names[:3])
        if site.validates is not None:
            wrapped = (
                ' Pydantic reports it inside a `ValidationError`, as "Value error, <message>" (or '
                '"Assertion failed, <message>").'
                if site.error_class.rsplit(".", 1)[-1] in VALIDATOR_WRAPPED
                else ""
            )
            return (
                f"Building `{site.in_class}` from data (a request body, a file or arguments) for which "
                f"{test} in its validator {where} ({fields}).{wrapped}"
            )
        return f"A request for which {test} in {where} (its {fields}; `{site.in_class}` holds the request)."
    if cause.kind == "input":
        test = f"`{cond}` holds" if cond else "the input check fails"
        return f"A request or call to {where} for which {test} ({', '.join(cause.names[:3])})."
    if passed is not None:
        return passed_on.trigger(passed, f"`{where}`", site.error_class)
    if cause.kind == "resource":
        return f"{where} runs out of {', '.join(cause.names)}."
    if cause.rule == PLATFORM_RULE:
        return f"Code registered or built for one platform alone reaches {where} on another, so `{cond}` holds; it should not happen with any launch setting."
    if cause.rule == DEVICE_RULE:
        return f"A caller hands {where} a tensor kept on another device than the one its path runs on, so `{cond}` holds; it should not happen with any launch setting."
    if cause.kind == "internal" and is_limit(site):
        return f"A call of {where} with a case it does not support ({f'`{cond}`' if cond else 'as its message says'})."
    if not cond and site.after_loop:
        return f"{where} raises {loop_end_words(site)}."
    if not cond:
        return (
            f"Any call that reaches {where} on this path raises; it marks a state the code does not expect."
        )
    return (
        f"Internal state in {where} for which `{cond}` holds; it should not happen with any launch setting."
    )


def _checkpoint_fix(site: Site, knowledge: Knowledge, cause: Cause) -> tuple[str, str]:
    """What to change when the message says the checkpoint (or its draft model, tokenizer or
    config) lacks what the check needs: that model, named by the path flag whose help names it
    (returned too, empty when none does)."""
    things = [n for n in cause.names if CHECKPOINT_THING_RE.fullmatch(n)]
    keys = [n for n in cause.names if n not in things and "_" in n]
    setters = []
    for thing in things:
        info = find_flag("path-naming", thing, knowledge.flags_for(site.path))
        if info is not None and info.flag not in setters:
            setters.append(info.flag)
    what = things[0] if things else "checkpoint"
    said = f" ({', '.join(f'`{k}`' for k in keys[:3])})" if keys else ""
    by = f" (the one {' / '.join(f'`{f}`' for f in setters[:2])} names)" if setters else ""
    # A model or tokenizer is swapped whole; a config, vocabulary or architecture comes with the
    # checkpoint that carries it.
    instead = f"another {what} that does" if what in _WHOLE_THINGS else f"a checkpoint whose {what} does"
    return (
        f"The {what}{by} does not meet this check{said} (the message says how): use {instead}, "
        "or fix its config files; no launch flag changes it"
    ), (setters[0] if setters else "")


_WHOLE_THINGS = frozenset({"draft model", "target model", "tokenizer", "checkpoint"})


# A message that speaks against what the launch has ("not supported with --x", "disable --x").
_AGAINST_RE = re.compile(
    r"disabl|remov|not (?:fully |yet )?supported|unsupported|incompatible|cannot (?:be used|accept)|"
    r"\bunavailable\b|"
    r"(?:do not|don't) (?:set|use|pass|enable|add)\b",
    re.I,
)


def _distributions(pkgs: Sequence[str], msg: str, knowledge: Knowledge) -> tuple[list[str], list[str]]:
    """The pip names of ``pkgs`` (import or message names), and those no pip name is known for.

    A ``pip install x`` the message spells is kept as is; otherwise a name is what the target's
    package metadata declares for it (``flashinfer`` -> ``flashinfer_python==0.6.14``). A name the
    metadata does not declare is kept only when the metadata is unknown: then nothing better is.
    """
    out: list[str] = []
    unknown: list[str] = []
    for p in pkgs:
        bare = re.split(r"[<>=!~\[]", p, maxsplit=1)[0]
        if re.search(rf"pip3? install (?:-U |--upgrade )?['\"]?{re.escape(bare)}\b", msg):
            out.append(p)
            continue
        declared = knowledge.distribution_for(bare)
        if declared is not None:
            name = requirement_name(declared)
            out.append(declared if bare == p or not name else p.replace(bare, name, 1))
        elif knowledge.knows_distributions():
            unknown.append(bare)
        else:
            out.append(p)
    return list(dict.fromkeys(out)), list(dict.fromkeys(unknown))


# The value a flag ordered against a key of the model's config must take, by the failing test's
# operator with the flag on its left (``tp_size > n_routed_experts``: at most that key).
_WITHIN = {"gt": "at most", "ge": "below", "lt": "at least", "le": "above"}


def _against_config(flag: str, roles: Roles) -> str | None:
    """``<at most n_routed_experts>``: what ``flag`` must be when the failing test orders it
    against a key of the checkpoint's config; None for any other test."""
    for v in roles.deciding:
        test = simplify(v.expr) if v.expr is not None and v.model else None
        info = next((f for f in v.reads.flags if f.flag == flag), None)
        if info is None or not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            continue
        keys = config_keys([v])
        op = CMP_OPS.get(type(test.ops[0]), "")
        if info.dest not in unparse(test.left):
            op = MIRROR.get(op, op)
        words = _WITHIN.get(op)
        if keys and words is not None:
            return f"<{words} {keys[0]}>"
    return None


def _bound_word(flag: str, roles: Roles) -> str | None:
    """What ``flag`` must be, as a placeholder, when the one failing test orders it against a
    value or splits by it: ``<at most n_numa_node>`` for ``tp_size > n_numa_node``, ``<a divisor
    of hidden_size>`` for ``hidden_size % tp_size != 0``, ``<a multiple of 64>`` for ``page_size %
    64 != 0``; None for any other test."""
    views = [v for v in roles.deciding if any(f.flag == flag for f in v.reads.flags)]
    if len(views) != 1 or views[0].expr is None:
        return None
    info = next(f for f in views[0].reads.flags if f.flag == flag)
    test = simplify(views[0].expr)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    split = divisor_test(test)
    if split is not None and split[2] == "indivisible":
        # ``x % y != 0`` fails: the flag is ``y`` (a divisor of ``x``) or ``x`` (a multiple of ``y``).
        num, den, _ = split
        if info.dest in unparse(den) and info.dest not in unparse(num) and _plain(num) and _plain(den):
            return f"<a divisor of {unparse(num)}>"
        if info.dest in unparse(num) and info.dest not in unparse(den) and _plain(den) and _plain(num):
            return f"<a multiple of {unparse(den)}>"
        return None
    op = CMP_OPS.get(type(test.ops[0]), "")
    left, right = test.left, test.comparators[0]
    if op not in _WITHIN:
        return None
    if info.dest not in unparse(left):
        op, left, right = MIRROR.get(op, op), right, left
    # The flag's own value on one side (not ``len(self.lora_paths)``), a plain bound on the other.
    if info.dest not in unparse(left) or info.dest in unparse(right) or not (_plain(left) and _plain(right)):
        return None
    return f"<{_WITHIN[op]} {unparse(right)}>"


def _plain(node: ast.expr) -> bool:
    """A literal, a name or an attribute chain: short enough to stand in a command line."""
    return isinstance(node, ast.Constant | ast.Name) or (
        isinstance(node, ast.Attribute) and len(unparse(node)) <= 40 and "(" not in unparse(node)
    )


def _speaks_against(msg: str, flag: str) -> bool:
    """Whether the message names switch ``flag`` as what the case does not support, not as what to
    pass ("use --disable-x", "set --x"): a ``--disable-`` switch named in a complaint is the cure."""
    if flag.startswith("--disable") or _AGAINST_RE.search(msg) is None:
        return False
    told = re.search(
        rf"(?<!not )(?<!n't )\b(?:use|pass|add|set|enable|try)\s+[`'\"]?{re.escape(flag)}(?![\w-])", msg, re.I
    )
    return told is None


def _is_switch(knowledge: Knowledge, site: Site, flag: str) -> bool:
    info = declared_flag(flag, knowledge.flags_for(site.path))
    return info is not None and info.is_bool
