"""Reach in the records' words: which user choices lead to the site, said as context.

:func:`with_reach` takes a record's prose fields (as the workers built them) and the site's reach
(:mod:`extractor.reach`) and returns them with the reach stated: a sentence in ``documentation``
and ``triggerScenarios``, the backend, method, model and platform in ``tags``, the selecting
flags on the command lines of ``exampleFix``, and, where the code offers other values for a
selecting flag, "use another value" as a workaround.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from extractor.analysis.conditions import split_and
from extractor.prose.constraints import simplify
from extractor.prose.device import DEVICE_KEY, with_device
from extractor.prose.direct import DIRECT, argument_words, direct_arguments, direct_entry, with_direct
from extractor.prose.drafts import draft_only, with_drafts
from extractor.prose.enrich import DEAD_KEY
from extractor.prose.knowledge import FlagInfo, Knowledge, is_knowledge_path
from extractor.prose.model_set import ModelSets, Rewritten, with_model_set, with_rewritten
from extractor.prose.passed import (
    PASSED_KEY,
    flag_from_plain,
    passed_table,
    with_data_flag,
    with_flag_text,
    with_passed,
    with_split_config,
)
from extractor.prose.tags import INTERNAL_TAG, retagged
from extractor.prose.unsupported import with_unsupported
from extractor.prose.wording import or_list
from extractor.reach import SiteReach
from extractor.reach.arguments import CONFIG_SOURCE
from extractor.reach.gates import gate_alternatives, tidy, with_gates
from extractor.reach.handled import ESCAPES, ends_raise
from extractor.reach.paths import Reach
from extractor.reach.selectors import ENV_OFF, PLATFORM_NAMES, Selector, user_ways
from extractor.reach.target_index import Edge
from extractor.records.reach_tags import arch_tag, kebab
from extractor.types import FileOutcome, Parsed

if TYPE_CHECKING:
    from extractor.source.git import TargetFile

__all__ = ["RunReach", "reach_phrase", "site_reach", "with_reach"]

_PLATFORM_TAGS = {"hip": "rocm", "cuda": "cuda"}
_COMMAND = re.compile(r"sglang\.launch_server|sglang serve|python3? -m sglang")
_MAX_TAGS = 10
_ON_BY_DEFAULT = ("on",)
"""The values of an ``env`` selector whose variable is a boolean that defaults to true."""
_LAUNCHED = ("launch",)
"""The values of an ``env`` selector whose variable the launch code also turns on itself."""
_OFF_AT_LAUNCH = ("0", "launch")
"""The values of an ``env`` selector set to 0 whose variable (on by default) the launch code also
turns off itself."""
_LISTED_ARCHS = 4


Validation = tuple[tuple[str, str, tuple[str, ...]], ...]
"""A flag combination the server-args validation refuses: every ``(flag, op, values)`` holds, op
``on`` (given), ``off`` (left out) or ``in`` (one of the values)."""


def _holds(atom: tuple[str, str, tuple[str, ...]], kept: frozenset[Selector]) -> bool:
    """Whether a way in that keeps ``kept`` surely meets ``atom`` of a refused combination."""
    flag, op, values = atom
    for kind, name, vals in kept:
        if kind != "flag" or name != flag:
            continue
        if op == "on":
            return True
        if op == "in" and vals and set(vals) <= set(values):
            return True
    return False


_NO_CALLER: Reach = (frozenset({(DIRECT, "", ())}),)
"""The reach of a function nothing of the target calls."""

Implied = Mapping[str, Sequence[str]]
"""switch -> the flags whose giving turns it on in the launch code (``--lora-paths`` turns on
``--enable-lora``)."""


class _Terms(NamedTuple):
    """What the reach sentence says beside a flag: see :func:`reach_phrase`."""

    defaults: Mapping[str, str]
    agreed: AbstractSet[str]
    implied: Implied
    switches: AbstractSet[str]
    picked: Mapping[str, Sequence[str]]
    forced: Forced
    replaced: Mapping[str, str]
    phased: Mapping[str, Sequence[str]] = {}
    negated: Mapping[str, str] = {}
    refused: AbstractSet[str] = frozenset()


_NO_TERMS = _Terms({}, frozenset(), {}, frozenset(), {}, {}, {})


def _either(flags: Sequence[str]) -> str:
    return " or ".join(f"`{f}`" for f in flags)


def _sets(name: str, switches: AbstractSet[str], many: bool = False) -> str:
    """How a flag that another one implies is set by it: a switch is turned on, a value filled in
    (``many``: by each of several flags, all of which must be left out)."""
    if name in switches:
        return "which turn it on" if many else "which turns it on"
    return "which set it" if many else "which sets it"


def _values_words(head: str, values: Sequence[str]) -> str:
    """```--x a` or `b``` (head ``"--x "``), ```X=a` or `b``` (head ``"X="``)."""
    return " or ".join([f"`{head}{values[0]}`", *(f"`{v}`" for v in values[1:])])


def _selector_words(sel: Selector, terms: _Terms = _NO_TERMS) -> str:
    new = terms.replaced.get(sel[1]) if sel[0] == "flag" else None
    if new and not sel[2] and sel[1] in terms.switches and new in terms.switches:
        # A deprecated switch that its replacement turns on: the replacement is what to give.
        others = [b for b in terms.implied.get(sel[1], ()) if b != new]
        extra = f"; or {_either(others)}, {_sets(sel[1], terms.switches)}" if others else ""
        return f"`{new}` (or the deprecated `{sel[1]}` it replaces{extra})"
    words = _plain_selector_words(sel, terms)
    phases = terms.phased.get(sel[1], ()) if sel[0] == "flag" and sel[2] else ()
    if phases:
        # ``--prefill-attention-backend x`` picks from the same choices for one phase of the run.
        also = f"or that value for {' / '.join(f'`{p}`' for p in phases)}"
        words = f"{words[:-1]}; {also})" if words.endswith(")") else f"{words} ({also})"
    if new:
        # A deprecated spelling still parses, but the user's command line (and the docs) now
        # give its replacement: say both.
        note = f"deprecated in favour of `{new}`"
        if f"`{new}`" not in words:
            words = f"{words[:-1]}; {note})" if words.endswith(")") else f"{words} ({note})"
    return words


def _plain_selector_words(sel: Selector, terms: _Terms) -> str:
    kind, name, values = sel
    if kind == "flag":
        if not values:
            off = terms.negated.get(name)
            if off:
                # Left out, the switch is on by default or by what the launch detects.
                return f"`{name}` on (given, or turned on at launch unless `{off}` is given)"
            if name in terms.negated:
                return f"`{name}` on (given, or turned on when sglang detects that the data needs it)"
            by = terms.implied.get(name, ())
            return f"`{name}` (or {_either(by)}, {_sets(name, terms.switches)})" if by else f"`{name}`"
        said = _values_words(f"{name} ", values)
        if name in terms.refused:
            # No declaration's choices hold the value: argparse refuses it on the command line.
            return f"{said} (a value the command line refuses: only Python code, `ServerArgs` or `sglang.Engine`, sets it)"
        if name in terms.agreed:
            # The checkpoint's config names the value itself; the flag only has to agree with it.
            return f"{said} (given, or declared by the checkpoint's config)"
        archs = _forced_archs(name, values, terms.forced)
        if archs:
            # The code sets the value for those architectures over whatever the user gave.
            shown = ", ".join(f"`{a}`" for a in archs[:_LISTED_ARCHS]) + (
                ", ..." if len(archs) > _LISTED_ARCHS else ""
            )
            return f"{said} (which sglang sets for {shown} checkpoints, whatever is given)"
        default = terms.defaults.get(name)
        pickable = terms.picked.get(name)
        if default == "" and (not pickable or set(values) & set(pickable)):
            # Left out, the flag gets a value the launch code picks (for the model and hardware).
            return f"{said} (given, or picked by sglang when `{name}` is left out)"
        if default == "":
            # The launch code picks among some values, never this one: only giving it leads here.
            return said
        if default is not None and default in values:
            # Of several values, say which one a launch that leaves the flag out holds.
            return f"{said} (`{default}` is its default)" if len(values) > 1 else f"{said} (its default)"
        if set(values) & set(pickable or ()):
            # The launch code sets the value itself for some setups (``auto`` resolved).
            return f"{said} (given, or set by sglang itself for some models or hardware)"
        return said
    if kind == "env":
        if values == _ON_BY_DEFAULT:
            return f"`{name}` on (its default)"
        if values == ENV_OFF:
            return f"`{name}` off (its default)"
        if values == _LAUNCHED:
            return f"`{name}` set (by you, or by sglang itself for some models or hardware)"
        if values == _OFF_AT_LAUNCH:
            return f"`{name}=0` (by you, or by sglang itself for some models or hardware)"
        if values:
            return _values_words(f"{name}=", values)
        return f"`{name}` set"
    if kind == "platform":
        return PLATFORM_NAMES.get(name, name)
    if kind == "arch" and values:
        if len(values) > _LISTED_ARCHS:
            shown = ", ".join(f"`{v}`" for v in values[:_LISTED_ARCHS])
            return f"one of {len(values)} model architectures ({shown}, ...)"
        return ", ".join(f"`{v}`" for v in values[:-1]) + f" or `{values[-1]}`"
    return f"`{name}`"


def _conj_words(conj: frozenset[Selector], terms: _Terms = _NO_TERMS) -> str:
    ordered = sorted(conj, key=lambda s: ({"flag": 0, "env": 1, "arch": 2, "platform": 3}.get(s[0], 4), s))
    parts = []
    for s in ordered:
        if s[0] == DIRECT and not s[1]:
            parts.append(
                "when code of your own calls it directly (nothing in sglang outside its tests calls it)"
            )
        elif s[0] == DIRECT:
            names = " and ".join(argument_words(n) for n in s[1].split(","))
            parts.append(
                f"when a call passes {names}, which no caller in sglang does (only your own code calling it directly)"
            )
    flags = [_selector_words(s, terms) for s in ordered if s[0] in ("flag", "env")]
    if flags:
        parts.append("with " + " and ".join(flags))
    archs = [_selector_words(s) for s in ordered if s[0] == "arch"]
    keys = [f"`{s[1]}`" for s in ordered if s[0] == "config"]
    if archs:
        words = " and ".join(archs)
        said = f"for {words}" + ("" if words.startswith("one of") else " checkpoints")
        if keys:
            said += f" whose config sets {' and '.join(keys)}"
        parts.append(said)
    platforms = [_selector_words(s) for s in ordered if s[0] == "platform"]
    if platforms:
        parts.append("on " + " and ".join(platforms))
    return ", ".join(parts)


def reach_phrase(
    reach: Reach,
    defaults: Mapping[str, str] | None = None,
    agreed: AbstractSet[str] = frozenset(),
    implied: Implied | None = None,
    switches: AbstractSet[str] | None = None,
    picked: Mapping[str, Sequence[str]] | None = None,
    forced: Forced | None = None,
    replaced: Mapping[str, str] | None = None,
    phased: Mapping[str, Sequence[str]] | None = None,
    negated: Mapping[str, str] | None = None,
    refused: AbstractSet[str] = frozenset(),
) -> str:
    """``with `--attention-backend dsa` or `nsa`, for `X` checkpoints`` (empty when nothing narrows).
    ``defaults``: valued flags that always hold a value -> their default (empty: picked by the code);
    ``agreed``: flags whose value the checkpoint's config declares; ``implied``: the flags that turn
    a switch on (or fill in an optional value); ``switches``: the flags that are switches (all of
    them when not given); ``picked``: values the launch code sets a flag to itself; ``forced``: the
    architectures the code sets each value for, whatever the command line says; ``replaced``:
    deprecated spellings -> the flag each stands in for; ``negated``: switches that leaving out does
    not turn off -> the spelling that does (``--no-x``); ``refused``: valued flags whose selecting
    values no declaration's choices hold."""
    implied = implied or {}
    terms = _Terms(
        defaults or {},
        agreed,
        implied,
        frozenset(implied) if switches is None else switches,
        picked or {},
        forced or {},
        replaced or {},
        phased or {},
        negated or {},
        refused,
    )
    common = frozenset.intersection(*reach) if len(reach) > 1 else frozenset()
    rest = [c - common for c in reach]
    if common and all(len(r) == 1 and next(iter(r))[0] in ("flag", "env") for r in rest):
        # ``with A, for X; or with B, for X`` reads as ``with A or B, for X``.
        # ", or" between the ways: a way may list values joined by "or" itself.
        either = ", or ".join(_selector_words(next(iter(r)), terms) for r in rest)
        shared = _conj_words(common, terms)
        if shared.startswith("with "):
            return f"with {either}, and {shared}"
        return f"with {either}, {shared}"
    # Ways that need only a platform read as one: "on CUDA (NVIDIA GPUs) or ROCm (AMD GPUs)".
    alone = [c for c in reach if len(c) == 1 and next(iter(c))[0] == "platform"]
    ways: list[str] = []
    for c in reach:
        if len(alone) < 2 or c not in alone:
            ways.append(_conj_words(c, terms))
        elif c == alone[0]:
            ways.append("on " + or_list([_selector_words(next(iter(p))) for p in alone]))
    return "; or ".join(w for w in ways if w)


def _tags(reach: Reach) -> list[str]:
    out: list[str] = []
    for conj in reach:
        for kind, name, values in sorted(conj):
            if kind == "flag":
                out.extend(kebab(v) for v in values[:3])
                if not values:
                    out.append(kebab(name))
            elif kind == "platform":
                out.append(_PLATFORM_TAGS.get(name, name))
            elif kind == "arch":
                names = [name] if name else list(values[:3])
                out.extend(arch_tag(n) for n in names)
    return [t for t in out if t]


Forced = Mapping[str, Mapping[str, Sequence[str]]]
"""flag -> value -> the architectures the code gives that value (:mod:`extractor.reach.forced`)."""


def _forced_archs(name: str, values: Sequence[str], forced: Forced) -> list[str]:
    by_value = forced.get(name, {})
    return sorted({a for v in (values or ("True",)) for a in by_value.get(v, ())})


_MAX_HANDLED = 4


_MAX_DECLARED = 3
"""A flag declaring more choices than this is offered no other value from its declaration alone:
which of many works for this model is what a registry (or the code's own tests) says."""


def _other_values(
    reach: Reach, choices: Mapping[str, Sequence[str]], forced: Forced | None = None
) -> list[tuple[str, tuple[str, ...], list[str]]]:
    """(flag, the values that select the path, the flag's other choices) for each valued flag
    of a single way in that has other choices (and that no architecture is forced to)."""
    if len(reach) != 1:
        return []
    out = []
    for kind, name, values in sorted(reach[0]):
        if kind != "flag" or not values:
            continue
        if forced and _forced_archs(name, values, forced):
            continue  # another value is no way out for the checkpoints that get this one
        others = [c for c in choices.get(name, ()) if c not in values]
        if forced:
            # A value the code gives to some model's checkpoints is no general alternative.
            others.sort(key=lambda c: bool(forced.get(name, {}).get(c)))
        if others:
            out.append((name, tuple(values), others))
    return out


_MARLIN = "_marlin"


def _workarounds(
    reach: Reach,
    choices: Mapping[str, Sequence[str]],
    switches: AbstractSet[str] = frozenset(),
    agreed: AbstractSet[str] = frozenset(),
    optional: AbstractSet[str] = frozenset(),
    forced: Forced | None = None,
    implied: Implied | None = None,
    phased: Mapping[str, Sequence[str]] | None = None,
    negated: Mapping[str, str] | None = None,
    handled: AbstractSet[str] = frozenset(),
    replaced: Mapping[str, str] | None = None,
    picked: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """``handled``: valued flags whose choices here are the values the site's own code tests for;
    ``picked``: the values the launch code sets each flag to itself (for some models or hardware)."""
    reach = _shared(reach)
    if not reach:
        return []
    out = []
    for name, values, others in _other_values(reach, choices, forced):
        what = name.removeprefix("--").replace("-", " ")
        shown = " / ".join(values)
        if name in agreed:
            # The checkpoint decides the value and a given one must match it: another value on the
            # command line is refused, so the way out is another checkpoint.
            out.append(
                f"This code runs only when the {what} is `{shown}`: a checkpoint that declares its "
                f"{what} in its config gets that one (a value on the command line that does not fit "
                f"it is refused), and only a checkpoint that declares none takes it from the command "
                f"line. If `{shown}` is not required, use a checkpoint made without it and do not ask "
                f"for it at launch"
            )
            # ``awq_marlin`` beside ``awq``: the Marlin kernels are what sglang moves a checkpoint
            # of the plain kind to where its layers allow, and asking for the plain kind keeps it
            # on that kind's kernels. (Other compound names, ``modelopt_mixed`` or ``quark_mxfp4``,
            # are kinds of their own that the plain name does not select.)
            for value in values:
                stem = value.removesuffix(_MARLIN)
                base = stem if stem != value and stem in choices.get(name, ()) else None
                if base is not None and base not in values:
                    out.append(
                        f"A checkpoint that declares `{base}` is run with `{value}` where its layers "
                        f"allow it: `{name} {base}` keeps it on the `{base}` kernels instead"
                    )
            continue
        phases = (phased or {}).get(name, ())
        other = (
            f"use one of the others this code handles: `{name} {others[0]}`"
            + "".join(f", `{o}`" for o in others[1:-1])
            + (f" or `{others[-1]}`" if len(others) > 1 else "")
            if name in handled and len(others) <= _MAX_HANDLED
            else f"use another one, e.g. `{name} {others[0]}`"
        )
        # A value sglang picks itself for some models or hardware may be the one the model needs:
        # another one is a way out only where the user gave it.
        mine = set(values) & set((picked or {}).get(name, ()))
        out.append(
            f"This code runs only with `{name} {shown}`: "
            + (
                f"sglang picks it itself for some models and hardware, which may need it; if you gave it "
                f"yourself and that {what} is not required, {other}"
                if mine
                else f"if that {what} is not required, {other}"
            )
            + (
                f" (and leave out {' and '.join(f'`{p}`' for p in phases)}, or give "
                f"{'them' if len(phases) > 1 else 'it'} another one too)"
                if phases
                else ""
            )
        )
    for kind, name, values in sorted(reach[0]):
        # Turning off the optional feature that selects the path avoids the site.
        if forced and kind == "flag" and _forced_archs(name, values, forced):
            continue
        off = (negated or {}).get(name) if kind == "flag" and not values else None
        if off == "":
            # Detected from the data (the adapter's own weights): leaving the switch out does not
            # turn it off, and forcing it off would read that data wrongly. No way out here.
            continue
        if off:
            out.append(
                f"This code runs only with `{name}` on, and leaving it out may not turn it off (its "
                f"default, or what the launch detects, turns it on): if you can do without it, "
                f"launch with `{off}`"
            )
        elif (
            kind == "flag"
            and not values
            and name in switches
            and (new := (replaced or {}).get(name)) is not None
            and new in switches
        ):
            # A deprecated switch: its replacement is what a command line gives today.
            others = [b for b in (implied or {}).get(name, ()) if b != new]
            out.append(
                f"This code runs only with `{new}`: if you can do without it, launch without `{new}` "
                f"(and without the deprecated `{name}` it replaces"
                + (
                    f", and without {_either(others)}, {_sets(name, switches, len(others) > 1)}"
                    if others
                    else ""
                )
                + ")"
            )
        elif (
            kind == "flag" and not values and (name in switches or (name in optional and name not in agreed))
        ):
            out.append(
                f"This code runs only with `{name}`: if you can do without it, launch without `{name}`"
                + (
                    f" and without {_either(by)}, {_sets(name, switches, len(by) > 1)}"
                    if (by := (implied or {}).get(name))
                    else ""
                )
            )
        elif kind == "flag" and name in optional and name not in agreed:
            # A valued flag that is off unless given: leaving it out leaves every value's path.
            out.append(
                f"This code runs only with `{name} {' / '.join(values)}`: if you can do without it, "
                f"launch without `{name}`"
            )
        elif kind == "env" and name.startswith("SGLANG") and values == _ON_BY_DEFAULT:
            # Unsetting a variable that is on by default changes nothing: it must be turned off.
            out.append(
                f"This code runs only with `{name}` on, which is its default: if you can do without "
                f"it, launch with `{name}=0`"
            )
        elif kind == "env" and values == ENV_OFF:
            # A kill switch (or the other side of a toggle) left alone: turning it on leaves the path.
            out.append(
                f"This code runs only with `{name}` off, which is its default: if you can do without "
                f"it, launch with `{name}=1`"
            )
        elif kind == "env" and name.startswith("SGLANG") and values == _LAUNCHED:
            out.append(
                f"This code runs only with `{name}` set: if you can do without it, unset `{name}` "
                "(where sglang sets it itself, for some models or hardware, that is not enough)"
            )
        elif kind == "env" and name.startswith("SGLANG") and values == _OFF_AT_LAUNCH:
            # sglang turns it off itself for some setups: unsetting it is no way back on there.
            out.append(
                f"This code runs only with `{name}=0` (it is on by default, and sglang turns it off "
                f"itself for some models or hardware): if you set it, unset `{name}`; where sglang "
                "turns it off, no setting of yours avoids this path"
            )
        elif kind == "env" and name.startswith("SGLANG") and values == ("0",):
            out.append(
                f"This code runs only with `{name}=0` (it is on by default): if you can do without it, "
                f"unset `{name}`"
            )
        elif kind == "env" and name.startswith("SGLANG") and values:
            out.append(
                f"This code runs only with `{name}={' / '.join(values)}`: if you can do without it, "
                f"unset `{name}`"
            )
        elif kind == "env" and name.startswith("SGLANG"):
            out.append(f"This code runs only with `{name}` set: if you can do without it, unset `{name}`")
    return out


def _shared(reach: Reach) -> Reach:
    """The one way in, or what every way in needs (``(A and X) or (A and Y)`` needs ``A``): a
    workaround or a failing launch may rest on that alone. Empty when the ways share nothing."""
    if len(reach) <= 1:
        return reach
    common = set(frozenset.intersection(*reach))
    # ``(--x a and Y) or --x b``: every way in needs ``--x`` set to ``a`` or ``b``.
    valued: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for conj in reach:
        for kind, name, values in conj:
            if kind == "flag" and values:
                valued.setdefault((kind, name), []).append(values)
    for (kind, name), seen in sorted(valued.items()):
        if len(seen) == len(reach) and not any((kind, name, v) in common for v in seen):
            common.add((kind, name, tuple(sorted({v for values in seen for v in values}))))
    return (frozenset(common),) if common else ()


def _command_args(
    reach: Reach,
    switches: AbstractSet[str],
    refused: AbstractSet[str] = frozenset(),
    replaced: Mapping[str, str] | None = None,
) -> list[str]:
    reach = _shared(reach)
    if not reach:
        return []
    args = []
    for kind, name, values in sorted(reach[0]):
        if name in refused:
            continue  # the command line would not parse it
        # A flag that takes a value is only written with one: ``--x`` alone would not parse. Of
        # several values that all lead here, the first stands for them.
        if kind == "flag" and (values or name in switches):
            new = (replaced or {}).get(name) if not values else None
            # A deprecated switch is written as the one that replaced it, as a command line is today.
            name = new if new is not None and new in switches else name
            args.append(f"{name} {'|'.join(values)}" if values else name)
        elif kind == "flag":
            # A valued flag that only has to be given: any of its values leads here.
            args.append(f"{name} {ANY_VALUE}")
    return list(dict.fromkeys(args))


ANY_VALUE = "<any>"
"""The value :func:`_command_args` writes for a flag that only has to be given; :func:`with_reach`
writes the first of its choices instead, or ``<value>`` for a flag without choices."""


def _given_value(arg: str, choices: Mapping[str, Sequence[str]]) -> str:
    """``--flag <any>`` as ``--flag`` with one of its choices (all of them lead here), or with a
    ``<value>`` to fill in when it declares none."""
    name, _, value = arg.partition(" ")
    if value != ANY_VALUE:
        return arg
    options = choices.get(name, ())
    return f"{name} {options[0]}" if options else f"{name} <value>"


def _one_value(arg: str, documentation: str, order: Sequence[str] = ()) -> str:
    """``--flag a|b|c`` as one launch argument: the value the site's own words name (the
    ``mooncake`` of ``.../mooncake/conn.py``), else the first the target registers (usually its
    main one), else the first; any of them leads here."""
    name, _, values = arg.partition(" ")
    if "|" not in values:
        return arg
    rank = {v.lower(): i for i, v in enumerate(order)}
    options = sorted(values.split("|"), key=lambda v: rank.get(v.lower(), len(rank)))
    head = documentation.split(". ", 1)[0].lower()
    named = [v for v in options if re.search(rf"(?<![a-z0-9]){re.escape(v.lower())}(?![a-z0-9])", head)]
    return f"{name} {(named or options)[0]}"


def _with_args(fix: str, args: list[str]) -> str:
    # The "before" launch gets the selectors it lacks. The "after" launch gets the same ones when
    # the "after" part makes a change of its own, in its lines or its comment (else it reads as if
    # dropping them were part of the fix); a bare "after" part equal to the "before" one, or a
    # launch that sets a selector itself, is the change that drops or swaps the selector, and is
    # left as it is.
    lines = fix.split("\n")
    parts = [_part(line) if line.startswith("#") else "" for line in lines]
    part = ""
    for i, p in enumerate(parts):
        part = p or ("" if lines[i].startswith("#") else part)
        parts[i] = part
    before = [
        line for line, p in zip(lines, parts, strict=True) if p == "before" and not line.startswith("#")
    ]
    after = [line for line, p in zip(lines, parts, strict=True) if p == "after" and not line.startswith("#")]
    # "# after: the same launch on SM90 hardware": the comment names the change the lines do not show.
    said = any(
        line.startswith("#") and _part(line) == "after" and line.partition(":")[2].strip() for line in lines
    )
    added: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("#") or not parts[i] or not _COMMAND.search(line):
            continue
        if parts[i] == "before":
            missing = [a for a in args if a.split(" ")[0] not in line.split()]
            added.extend(a for a in missing if a not in added)
        elif after != before or said:
            missing = [a for a in added if a.split(" ")[0] not in line.split()]
        else:
            continue
        if missing:
            lines[i] = " ".join([line.rstrip(), *missing])
    return "\n".join(lines)


_WITHOUT_RE = re.compile(r"[Ll]aunch without `([^`]+)`")
_WITH_RE = re.compile(r"launch with `([^`]+)`")
_UNSET_RE = re.compile(r"[Uu]nset `([^`]+)`")
_ASSIGNED_RE = re.compile(r"`([A-Z][A-Z0-9_]*)=[^`]+`")


_SWAP_RE = re.compile(r"use another one, e\.g\. `(--[a-z0-9-]+) ")
_OTHER_RE = re.compile(r"`(--[a-z0-9-]+)` other than")


def _said_already(extra: str, solutions: Sequence[str]) -> bool:
    """Whether every "launch without `X`" (or "launch with `X=0`") that ``extra`` advises is
    already a solution, or the other value of flag X it offers already is ("pick a `--x` other
    than ..."): the reach says the same thing the check's own gate did, and twice reads as two
    fixes."""
    swapped = _SWAP_RE.search(extra)
    if swapped is not None and any(swapped.group(1) in _OTHER_RE.findall(s) for s in solutions):
        return True
    # "launch with `SGLANG_X=0`" where a solution already sets `SGLANG_X=0` (the gate's own way out).
    given = set(_WITH_RE.findall(extra))
    if given and all(any(f"`{g}`" in s for s in solutions) for g in given):
        return True
    # "unset `SGLANG_X`" where the gate's own way out already unsets it, or sets it to a value
    # that passes ("Set `SGLANG_X=1`" for a check that needs it on).
    unset = set(_UNSET_RE.findall(extra))
    if (
        unset
        and not _WITHOUT_RE.search(extra)
        and unset <= {u for s in solutions for u in [*_UNSET_RE.findall(s), *_ASSIGNED_RE.findall(s)]}
    ):
        return True
    dropped = set(_WITHOUT_RE.findall(extra))
    if not dropped:
        return False
    said = {x for s in solutions for x in _WITHOUT_RE.findall(s)}
    return dropped <= said


def _part(comment: str) -> str:
    low = comment.lower()
    return "before" if low.startswith("# before") else "after" if low.startswith("# after") else ""


class _Wording(NamedTuple):
    """What a reach says in any record it narrows (the same for every site of a scope)."""

    phrase: str
    tags: list[str]
    workarounds: list[str]
    args: list[str]
    valued: list[tuple[str, tuple[str, ...], list[str]]]


def _wording(
    reach: Reach,
    choices: Mapping[str, Sequence[str]],
    switches: AbstractSet[str],
    agreed: AbstractSet[str] = frozenset(),
    optional: AbstractSet[str] = frozenset(),
    forced: Forced | None = None,
    defaults: Mapping[str, str] | None = None,
    implied: Implied | None = None,
    picked: Mapping[str, Sequence[str]] | None = None,
    replaced: Mapping[str, str] | None = None,
    phased: Mapping[str, Sequence[str]] | None = None,
    negated: Mapping[str, str] | None = None,
    refused: AbstractSet[str] = frozenset(),
    handled: AbstractSet[str] = frozenset(),
) -> _Wording:
    phrase = reach_phrase(
        reach, defaults, agreed, implied, switches, picked, forced, replaced, phased, negated, refused
    )
    if not phrase:
        return _Wording("", [], [], [], [])
    # What every way in needs is left by leaving it, whichever way the launch took.
    core = _shared(reach)
    return _Wording(
        phrase,
        _tags(reach),
        _workarounds(
            core,
            choices,
            switches,
            agreed,
            optional,
            forced,
            implied,
            phased,
            negated,
            handled,
            replaced,
            picked,
        ),
        _command_args(reach, switches, refused, replaced),
        _other_values(core, choices, forced),
    )


def with_reach(
    partial: Mapping[str, Any],
    reach: Reach,
    choices: Mapping[str, Sequence[str]],
    switches: AbstractSet[str] = frozenset(),
    agreed: AbstractSet[str] = frozenset(),
    optional: AbstractSet[str] = frozenset(),
    wording: _Wording | None = None,
    forced: Forced | None = None,
    declared: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The record fields with the reach stated; unchanged when nothing narrows the path.

    ``wording`` is ``_wording(reach, choices, switches, agreed, optional)`` when the caller already
    has it; ``declared`` the choices the server args declare for each flag, which a flag that only
    has to be given is written with when no registry lists its values."""
    if partial.get(DEAD_KEY):
        # A dead check (its path rules it out, or it never runs): no way in leads to it.
        return dict(partial)
    said = wording if wording is not None else _wording(reach, choices, switches, agreed, optional, forced)
    phrase = said.phrase
    if not phrase:
        return dict(partial)
    out = dict(partial)
    out["documentation"] = f"{partial['documentation']} This code runs only {phrase}."
    out["triggerScenarios"] = f"{partial['triggerScenarios']} It is reached only {phrase}."
    tags = list(partial["tags"])
    for tag in said.tags:
        if tag not in tags and len(tags) < _MAX_TAGS:
            tags.append(tag)
    out["tags"] = tags
    solutions = list(partial["solutions"])
    workarounds = said.workarounds
    for extra in workarounds:
        if extra not in solutions and not _said_already(extra, solutions):
            solutions.append(extra)
    out["solutions"] = solutions
    doc = str(partial.get("documentation", ""))
    filled = {**(declared or {}), **{f: v for f, v in choices.items() if v}}
    args = [_one_value(_given_value(a, filled), doc, choices.get(a.partition(" ")[0], ())) for a in said.args]
    if args and partial.get("exampleFix"):
        out["exampleFix"] = _with_args(partial["exampleFix"], args)
    valued = said.valued
    if valued:
        # The case a flag value leaves out: the value whose folder holds the code (``nixl`` of
        # ``disaggregation/nixl/conn.py``) before a broader one that also leads here, else the first.
        # Else the value the raising class is named after (``mxfp8`` of ``MHATokenToKVPoolMXFP8``,
        # raising when asked for disaggregation): that class is what lacks the case.
        # A message that names who lacks it ("not supported by Marlin") says so first.
        folders = set(str(partial.get("filePath", "")).split("/")[:-1])
        owner = _word(_qualname(partial).rpartition(".")[0])
        by = [
            _word(w)
            for named in _BY_RE.findall(str(partial.get("errorMessage", "")))
            for w in dict.fromkeys((named, named.split(" ")[0]))
        ]

        def fits(test: int, values: tuple[str, ...]) -> bool:
            if test == 0:
                return any(b in _word(v) for b in by for v in values)
            if test == 1:
                return bool(folders & set(values))
            return any(len(w) >= 3 and w in owner for w in map(_word, values))

        pick = next(
            (i for test in range(3) for i, (_, values, _) in enumerate(valued) if fits(test, values)), 0
        )
        flag, values, others = valued[pick]
        way = next((w for w in workarounds if f"`{flag} " in w), workarounds[0])
        out = with_unsupported(out, flag, values, others[0], way, flag in agreed)
    return out


def _word(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", value.lower())


# "is not supported by Marlin", "unsupported for MXFP8 KV cache": the words after "by" or "for"
# name what lacks the case.
_BY_RE = re.compile(
    r"\b(?:supported|implemented) (?:by|for) (?:the )?([A-Za-z][\w-]{2,}(?: [A-Za-z][\w-]+)?)"
)


def _background_tagged(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the tag of its first classification replaced by its background tag, where
    the whole-target reading made an internal check a setting's (a flag its callers pass, a
    direct call's arguments)."""
    background, tags = record.get("backgroundTag"), record.get("tags")
    if (
        background == INTERNAL_TAG
        or not isinstance(background, str)
        or not isinstance(tags, list)
        or INTERNAL_TAG not in tags
    ):
        return record
    return {**record, "tags": retagged(tags, INTERNAL_TAG, background)}


# Words of code that serves one phase alone. Extend code is left out: a speculative run's verify
# and draft-extend passes go through it with the decode phase's backend too.
_PHASE_WORDS = {"decode": "decode", "prefill": "prefill", "extend": ""}


def phase_of(path: str, qualname: str) -> str:
    """``decode`` when the names of the code (its function, class or file: ``forward_decode``,
    ``decode_attention.py``) say it serves the decode phase alone; else ``""``. Prefill and extend
    code is not one phase's: a speculative run's verify pass takes it with the decode backend."""
    text = "/".join([*path.rsplit("/", 2)[-2:], qualname]).lower()
    found = {p for w, p in _PHASE_WORDS.items() if re.search(rf"(?:^|[^a-z]){w}(?:$|[^a-z])", text)}
    return "decode" if found == {"decode"} else ""


_PHASE_FLAG_RE = re.compile(r"(?:^--|-)(decode|prefill)(?:-|$)")


def _in_phase(reach: Reach, phase: str) -> Reach:
    """``reach`` less the ways in that pick code for the other phase of the run (see
    :func:`phase_of`): code that serves decode alone (``FlashKDAKernel.decode``) is not run by the
    object a prefill-only flag builds (``--linear-attn-prefill-backend flashkda`` builds the extend
    kernel, whose ``decode`` nothing calls). When no way in is left, one was missed and nothing is
    said."""
    if not phase or not reach:
        return reach
    kept = tuple(
        conj for conj in reach if not any(s[0] == "flag" and _other_phase(s[1], phase) for s in conj)
    )
    return reach if len(kept) == len(reach) else kept


def _other_phase(flag: str, phase: str) -> bool:
    """Whether ``flag`` (``--prefill-attention-backend``, ``--linear-attn-prefill-backend``) is a
    phase's own, and that phase is not ``phase``."""
    m = _PHASE_FLAG_RE.search(flag)
    return bool(phase) and m is not None and m.group(1) != phase


SURVIVORS_KEY = "_survivors"
"""Partial-record key: the texts of the guard's atoms that negate an earlier check that raised
(``assert lora_info.use_virtual_experts`` before the site): what they test is required, not chosen."""

_NAMED_RE = re.compile(r"`(--[a-z0-9][a-z0-9-]*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)")


def _held_names(text: str) -> list[str]:
    """The names a survivor's text needs set or holding a value (``not not x.use_y`` and ``x.k is
    not None`` give ``use_y`` and ``k``); a negative part (``not x``, ``x is None``, ``not (a and
    b)``) needs nothing set."""
    try:
        node = simplify(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[str] = []
    for part in split_and(node):
        subject: ast.expr | None = None
        if isinstance(part, ast.Name | ast.Attribute):
            subject = part
        elif isinstance(part, ast.Compare) and len(part.ops) == 1:
            op = part.ops[0]
            empty = isinstance(part.comparators[0], ast.Constant) and not part.comparators[0].value
            if isinstance(op, ast.IsNot | ast.In) or (isinstance(op, ast.Eq) and not empty):
                subject = part.left
        if isinstance(subject, ast.Attribute):
            out.append(subject.attr)
        elif isinstance(subject, ast.Name):
            out.append(subject.id)
    return out


def _required(workaround: str, survivors: Sequence[str], callers: AbstractSet[str]) -> bool:
    """Whether ``workaround`` turns off or changes a flag or variable that an earlier check of the
    site's function requires (it raises without it), and that the function's callers do not
    already need (``callers``): that way out only trips the earlier check."""
    words = {w for text in survivors for w in _held_names(text)}
    head = workaround.partition(":")[0] if workaround.startswith("This code") else workaround
    return any(
        name not in callers and name.removeprefix("--").replace("-", "_") in words
        for name in _NAMED_RE.findall(head)
    )


class RunReach:
    """The reach of every site of one run (path -> qualname -> reach), applied as records are assembled."""

    def __init__(
        self,
        table: Mapping[str, Mapping[str, Reach]],
        choices: Mapping[str, Sequence[str]],
        passed: Mapping[str, Mapping[str, Mapping[str, Sequence[Any]]]] | None = None,
        switches: AbstractSet[str] = frozenset(),
        agreed: AbstractSet[str] = frozenset(),
        optional: AbstractSet[str] = frozenset(),
        forced: Forced | None = None,
        scoped: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        namespaces: Mapping[str, str] | None = None,
        defaults: Mapping[str, str] | None = None,
        implied: Implied | None = None,
        declared: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        picked: Mapping[str, Sequence[str]] | None = None,
        replaced: Mapping[str, str] | None = None,
        phased: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        negated: Mapping[str, str] | None = None,
        validations: Sequence[Validation] = (),
        drafts: AbstractSet[str] = frozenset(),
        tested: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        model_sets: ModelSets | None = None,
        override_paths: AbstractSet[str] = frozenset(),
        rewritten: Rewritten | None = None,
    ) -> None:
        # path -> qualname (the callers' reach) or whole site key (a site whose own guard
        # narrows it further) -> reach.
        self.table = table
        self.choices = choices
        self.switches = frozenset(switches)
        """Flags that are switches (given or not): turning one off is a workaround."""
        self.agreed = frozenset(agreed)
        """Valued flags whose value the checkpoint decides: another value is no workaround."""
        self.optional = frozenset(optional)
        """Valued flags that are off unless given: leaving one out is a workaround."""
        self.forced: Forced = forced or {}
        """flag -> value -> the architectures the code gives that value: no workaround for them."""
        self.passed = passed or {}
        """path -> qualname -> value token -> the flags its callers fill it from (plain)."""
        self.scoped = scoped or {}
        """namespace -> flag -> its choices there; with ``namespaces`` (path -> namespace), a site is
        offered only the values its own package's registries hold (``choices`` otherwise)."""
        self.namespaces = namespaces or {}
        self.defaults = defaults or {}
        """Valued flags that always hold a value -> their literal default (empty: the launch code
        picks one when the flag is left out): a path they select is not only for those who give it."""
        self.implied = implied or {}
        """Switches -> the flags that turn them on: leaving the path needs those left out too."""
        self.declared = declared or {}
        """namespace -> flag -> the choices its server args declare, empty for a flag declared
        without (see :meth:`_choices_for` and :meth:`_refused`)."""
        self.picked = picked or {}
        """flag -> values the launch code sets it to itself: a path they select is not only for
        those who give them."""
        self.replaced = replaced or {}
        """Deprecated spellings -> the flag each stands in for (said beside them)."""
        self.phased = phased or {}
        """namespace -> valued flags -> the flags that pick from the same choices for one phase of the run
        (``--attention-backend`` -> ``--prefill-attention-backend``, ``--decode-attention-backend``)."""
        self.negated = negated or {}
        """Switches that leaving out does not turn off -> the spelling that does (``--no-x``), or
        ``""`` for one the launch detects from the data (forcing it off is no way out)."""
        self.validations = tuple(validations)
        """The flag combinations the server-args validation refuses at startup (see :data:`Validation`)."""
        self.drafts = frozenset(drafts)
        """Architecture names sglang gives a draft model it loads (see :mod:`extractor.prose.drafts`)."""
        self.tested = tested or {}
        """path -> valued flag -> the values the code of that file tests for: the choices offered
        for a flag no registry lists choices of."""
        self.model_sets = model_sets or {}
        """flag -> what the model overrides that write it do (see :mod:`extractor.prose.model_set`)."""
        self.override_paths = frozenset(override_paths)
        """Files holding model overrides: their checks read the launch's own values."""
        self.rewritten = rewritten or {}
        """flag -> where the launch code replaces a value given for it (see :mod:`extractor.prose.model_set`)."""
        self._wordings: dict[tuple[str, Reach, str, tuple[tuple[str, Sequence[str]], ...]], _Wording] = {}

    def apply(self, path: str, partial: Mapping[str, Any]) -> dict[str, Any]:
        """``partial`` (a worker's record, its ``id`` still the site key) with its reach stated."""
        qualname = _qualname(partial)
        by_key = self.table.get(path, {})
        key = str(partial.get("id", ""))
        reach = by_key[key] if key in by_key else by_key.get(qualname, ())
        # Only a direct call of the user's own gets here: what sglang's callers pass never does.
        needed = direct_arguments(reach)
        spec = partial.get(PASSED_KEY)
        if spec is not None:
            partial = {k: v for k, v in partial.items() if k != PASSED_KEY}
            found = self.passed.get(path, {}).get(qualname) if needed is None else None
            if found:
                flags = {
                    t: [i for i in map(flag_from_plain, rows) if i is not None] for t, rows in found.items()
                }
                partial = with_passed(partial, spec, flags)
                split = str(spec.get("split", "")) if isinstance(spec, dict) else ""
                if flags.get(split) and all(f.namespace == CONFIG_SOURCE for f in flags[split]):
                    multiple = bool(spec.get("multiple")) if isinstance(spec, dict) else False
                    also = str(spec.get("also", "")) if isinstance(spec, dict) else ""
                    keys = flags.get(also) if also else None
                    other = (also, keys) if keys and all(f.namespace == CONFIG_SOURCE for f in keys) else None
                    partial = with_split_config(partial, split, flags[split], multiple, other)
                data = str(spec.get("data", "")) if isinstance(spec, dict) else ""
                if flags.get(data):
                    param, flag = data.partition(":")[2], flags[data][0].flag
                    if isinstance(spec, dict) and ("said" in spec or spec.get("internal")):
                        partial = with_flag_text(partial, spec, param, flag)
                    else:
                        partial = with_data_flag(partial, param, flag)
        if self.model_sets and path not in self.override_paths:
            partial = with_model_set(partial, reach, self.model_sets, self.forced, self.drafts) or partial
        # The launch code's own checks may run before its rewrites.
        if self.rewritten and not is_knowledge_path(path):
            partial = with_rewritten(partial, self.rewritten) or partial
        if needed is not None:
            partial = with_direct(partial, qualname, needed)
        device = partial.get(DEVICE_KEY)
        if device is not None:
            partial = with_device({k: v for k, v in partial.items() if k != DEVICE_KEY}, device, reach)
        ns = self.namespaces.get(path)
        choices = self._choices_for(ns, reach)
        # A flag no registry lists values of: the others this file's code tests for.
        named = {s[1] for conj in reach for s in conj if s[0] == "flag" and s[2]}
        handled = tuple(
            (flag, values)
            for flag, values in sorted(self.tested.get(path, {}).items())
            if flag in named and not choices.get(flag)
        )
        if handled:
            choices = {**choices, **dict(handled)}
        # Nor any value this file tests for: the choices the flag declares (``choices=("zigzag",
        # "interleave")``), so the way out is another of them, not leaving the flag out.
        own = self.declared.get(ns or "", {})
        selecting: dict[str, set[str]] = {}
        for conj in reach:
            for kind, flag, values in conj:
                if kind == "flag" and values:
                    selecting.setdefault(flag, set()).update(values)
        declared = {
            flag: tuple(own[flag])
            for flag in sorted(named)
            if set(choices.get(flag, ())) <= selecting.get(flag, set())
            and own.get(flag)
            and len(own[flag]) <= _MAX_DECLARED
            # A value the package does not declare was read in another package's code.
            and selecting.get(flag, set()) <= set(own[flag])
        }
        if declared:
            choices = {**choices, **declared}
        # The sites of a scope share its reach: its wording is made once per run (and package, and
        # phase of the run).
        phase = phase_of(path, qualname)
        memo = (ns or "", reach, phase, handled)
        wording = self._wordings.get(memo)
        if wording is None:
            wording = _wording(
                reach,
                choices,
                self.switches,
                self.agreed,
                self.optional,
                self.forced,
                self.defaults,
                self.implied,
                self.picked,
                self.replaced,
                self._phased_for(ns, reach, phase),
                self.negated,
                self._refused(reach),
                frozenset(flag for flag, _ in handled if flag not in declared),
            )
            if self.validations and wording.workarounds:
                wording = wording._replace(
                    workarounds=[w for w in wording.workarounds if not self._refused_at_startup(w, reach)]
                )
            self._wordings[memo] = wording
        survivors = partial.get(SURVIVORS_KEY)
        if survivors and wording.workarounds:
            # Only what the site's own function requires: a choice its callers already need is a
            # way around the whole function, earlier check included.
            callers = {s[1] for conj in by_key.get(qualname, ()) for s in conj}
            wording = wording._replace(
                workarounds=[w for w in wording.workarounds if not _required(w, survivors, callers)]
            )
        out = with_reach(
            partial,
            reach,
            choices,
            self.switches,
            self.agreed,
            self.optional,
            wording,
            declared=self.declared.get(ns or "", {}),
        )
        return _background_tagged(with_drafts(out, self.drafts) if draft_only(reach, self.drafts) else out)

    def _refused_at_startup(self, workaround: str, reach: Reach) -> bool:
        """Whether leaving out the switch that ``workaround`` drops makes a launch the server-args
        validation refuses, given what the way in keeps (``experimental_sgl_marlin`` with LoRA
        needs ``--lora-use-virtual-experts``): that fix would only move the error to startup."""
        dropped = set(_WITHOUT_RE.findall(workaround))
        if not dropped or len(reach) != 1:
            return False
        kept = reach[0]
        for rule in self.validations:
            offs = [a for a in rule if a[1] == "off"]
            if not any(a[0] in dropped for a in offs):
                continue
            if all(a[0] in dropped or _holds(a, kept) for a in rule):
                return True
        return False

    def _refused(self, reach: Reach) -> frozenset[str]:
        """The valued flags of ``reach`` whose selecting values no package's declaration offers
        among the choices it declares for that flag: the command line refuses them."""
        out = set()
        for conj in reach:
            for kind, name, values in conj:
                # A value the checkpoint's config declares never passes the command line.
                if kind != "flag" or not values or name in self.agreed:
                    continue
                declared = [set(by[name]) for _, by in sorted(self.declared.items()) if name in by]
                # A package that declares the flag without choices takes any value.
                if declared and all(declared) and not any(set(values) & d for d in declared):
                    out.add(name)
        return frozenset(out)

    def _phased_for(self, ns: str | None, reach: Reach, phase: str = "") -> Mapping[str, Sequence[str]]:
        """The per-phase flags of package ``ns`` for the flags whose selecting values it declares
        (a value read in another package's code is that package's flag's, which has none); for
        code of one ``phase`` of the run, the other phase's flag is left out."""
        declared = self.declared.get(ns or "", {})
        return {
            flag: kept
            for flag, phases in self.phased.get(ns or "", {}).items()
            if (kept := tuple(f for f in phases if not _other_phase(f, phase)))
            if all(
                set(v) <= set(declared.get(flag, ()))
                for c in reach
                for k, n, v in c
                if k == "flag" and n == flag
            )
        }

    def _choices_for(self, ns: str | None, reach: Reach) -> Mapping[str, Sequence[str]]:
        """The choices offered to a site of namespace ``ns``: its own package's, except for a flag
        whose selecting values that package neither registers nor declares. Such a value was read
        in another package's code (a kernel of the diffusion runtime kept outside its folder), and
        so are the alternatives: that package's registered ones, or none."""
        own = self.scoped.get(ns, {}) if ns is not None and self.scoped else self.choices
        if ns is None or not self.declared:
            return own
        out: dict[str, Sequence[str]] | None = None
        for conj in reach:
            for kind, name, values in conj:
                if kind != "flag" or not values or set(values) <= set(own.get(name, ())):
                    continue
                declared = self.declared.get(ns, {}).get(name)
                if not declared or set(values) <= set(declared):
                    continue
                out = dict(own) if out is None else out
                out[name] = next(
                    (
                        by[name]
                        for _, by in sorted(self.scoped.items())
                        if set(values) <= set(by.get(name, ()))
                    ),
                    (),
                )
        return own if out is None else out

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready: only scopes with a reach are kept, and every site whose own guard changes its
        scope's reach (to nothing, too: the scope's reach must not stand in for it when read back)."""
        return {
            "table": {
                path: {
                    q: [sorted([k, n, list(v)] for k, n, v in c) for c in r]
                    for q, r in sorted(by_q.items())
                    if r or "\x1f" in q
                }
                for path, by_q in sorted(self.table.items())
            },
            "choices": {k: list(v) for k, v in sorted(self.choices.items())},
            "switches": sorted(self.switches),
            "agreed": sorted(self.agreed),
            "optional": sorted(self.optional),
            "forced": {f: {v: list(a) for v, a in by_v.items()} for f, by_v in sorted(self.forced.items())},
            "scoped": {
                ns: {f: list(v) for f, v in sorted(by_f.items())} for ns, by_f in sorted(self.scoped.items())
            },
            "namespaces": dict(sorted(self.namespaces.items())),
            "defaults": dict(sorted(self.defaults.items())),
            "implied": {f: list(by) for f, by in sorted(self.implied.items())},
            "picked": {f: list(v) for f, v in sorted(self.picked.items())},
            "replaced": dict(sorted(self.replaced.items())),
            "negated": dict(sorted(self.negated.items())),
            "validations": [
                [[flag, op, list(values)] for flag, op, values in rule] for rule in self.validations
            ],
            "drafts": sorted(self.drafts),
            "tested": {
                path: {f: list(v) for f, v in sorted(by_f.items())}
                for path, by_f in sorted(self.tested.items())
            },
            "phased": {
                ns: {f: list(v) for f, v in sorted(by_f.items())} for ns, by_f in sorted(self.phased.items())
            },
            "declared": {
                ns: {f: list(v) for f, v in sorted(by_f.items())}
                for ns, by_f in sorted(self.declared.items())
            },
            "override_paths": sorted(self.override_paths),
            "rewritten": {f: [list(r) for r in rows] for f, rows in sorted(self.rewritten.items())},
            "model_sets": {
                f: [[how, list(values), list(archs)] for how, values, archs in entries]
                for f, entries in sorted(self.model_sets.items())
            },
            "passed": {
                path: {
                    q: {t: [list(r) for r in rows] for t, rows in sorted(by_t.items())}
                    for q, by_t in sorted(by_q.items())
                }
                for path, by_q in sorted(self.passed.items())
            },
        }

    @classmethod
    def from_plain(cls, data: Any) -> RunReach | None:
        """What :meth:`to_plain` wrote, or None for anything else."""
        try:
            table = {
                str(path): {
                    str(q): tuple(frozenset((str(k), str(n), tuple(v)) for k, n, v in c) for c in r)
                    for q, r in by_q.items()
                }
                for path, by_q in data["table"].items()
            }
            choices = {str(k): tuple(v) for k, v in data["choices"].items()}
            passed = {
                str(path): {
                    str(q): {str(t): list(rows) for t, rows in by_t.items()} for q, by_t in by_q.items()
                }
                for path, by_q in data["passed"].items()
            }
            switches = frozenset(str(f) for f in data["switches"])
            agreed = frozenset(str(f) for f in data["agreed"])
            optional = frozenset(str(f) for f in data["optional"])
            forced = {
                str(f): {str(v): tuple(str(a) for a in archs) for v, archs in by_v.items()}
                for f, by_v in data["forced"].items()
            }
            scoped = {
                str(ns): {str(f): tuple(str(x) for x in v) for f, v in by_f.items()}
                for ns, by_f in data["scoped"].items()
            }
            namespaces = {str(p): str(ns) for p, ns in data["namespaces"].items()}
            defaults = {str(f): str(d) for f, d in data["defaults"].items()}
            implied = {str(f): tuple(str(b) for b in by) for f, by in data["implied"].items()}
            picked = {str(f): tuple(str(v) for v in vs) for f, vs in data["picked"].items()}
            replaced = {str(f): str(new) for f, new in data["replaced"].items()}
            negated = {str(f): str(off) for f, off in data["negated"].items()}
            validations = [
                tuple((str(f), str(op), tuple(str(v) for v in vals)) for f, op, vals in rule)
                for rule in data["validations"]
            ]
            phased = {
                str(ns): {str(f): tuple(str(p) for p in v) for f, v in by_f.items()}
                for ns, by_f in data["phased"].items()
            }
            declared = {
                str(ns): {str(f): tuple(str(x) for x in v) for f, v in by_f.items()}
                for ns, by_f in data["declared"].items()
            }
            drafts = frozenset(str(a) for a in data["drafts"])
            tested = {
                str(path): {str(f): tuple(str(x) for x in v) for f, v in by_f.items()}
                for path, by_f in data["tested"].items()
            }
            model_sets = {
                str(f): tuple(
                    (str(how), tuple(str(v) for v in values), tuple(str(a) for a in archs))
                    for how, values, archs in entries
                )
                for f, entries in data["model_sets"].items()
            }
            override_paths = frozenset(str(p) for p in data["override_paths"])
            rewritten = {
                str(f): tuple((str(value), str(when)) for value, when in rows)
                for f, rows in data["rewritten"].items()
            }
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return cls(
            table,
            choices,
            passed,
            switches,
            agreed,
            optional,
            forced,
            scoped,
            namespaces,
            defaults,
            implied,
            declared,
            picked,
            replaced,
            phased,
            negated,
            validations,
            drafts,
            tested,
            model_sets,
            override_paths,
            rewritten,
        )


def _qualname(partial: Mapping[str, Any]) -> str:
    # The site key starts with the site's qualname (see ``payloads.site_key``).
    return str(partial.get("id", "")).split("\x1f", 1)[0]


def _guard(key: str) -> str:
    # The site key ends with the guard expression and then ``\x00`` and the occurrence count (see
    # ``payloads.site_key``); ``ast.unparse`` escapes control characters, so no field holds one.
    parts = key.rpartition("\x00")[0].split("\x1f")
    return parts[-1] if len(parts) >= 5 else ""


def _plain(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None  # a file without facts only loses its part in the index


def _ends(handling: Mapping[str, Any], name: str, escape: Any, edge: Edge) -> bool:
    return ends_raise(handling, edge.path, edge.caller.partition(":")[2], name, escape)


def _not_reaching(
    catching: Callable[[Edge], bool] | None, passes: Callable[[Edge], bool], edge: Edge
) -> bool:
    """Whether a call of a site's function is no way to its raise: it catches the raise, or it
    leaves out an argument the raise needs given (``passes``; an unknown signature may pass it)."""
    if catching is not None and catching(edge):
        return True
    return not passes(edge)


def _unnegated(atom: ast.expr) -> tuple[ast.expr, bool]:
    """The test under a guard atom's ``not`` (the atom itself when it has none), and whether it had one."""
    if isinstance(atom, ast.UnaryOp) and isinstance(atom.op, ast.Not):
        return atom.operand, True
    return atom, False


def _word_tests(guard: str) -> dict[str, frozenset[str]]:
    """name -> the words a site's guard lets past for it: a raise under ``kind != "a"`` and ``kind
    not in ("b", "c")`` (or ``not kind == "a"``) is not reached when ``kind`` is one of a, b, c."""
    out: dict[str, set[str]] = {}
    for atom in _guard_atoms(guard):
        test, negated = _unnegated(atom)
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1):
            continue
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.NotEq if not negated else ast.Eq):
            values: list[ast.expr] = [right]
        elif isinstance(op, ast.NotIn if not negated else ast.In) and isinstance(
            right, ast.Tuple | ast.List | ast.Set
        ):
            values = list(right.elts)
        else:
            continue
        if values and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            out.setdefault(test.left.id, set()).update(
                str(v.value) for v in values if isinstance(v, ast.Constant)
            )
    return {n: frozenset(ws) for n, ws in out.items()}


def _guard_atoms(guard: str) -> list[ast.expr]:
    """The tests a site's guard text joins with ``and`` at its top (the whole guard when it joins
    none); none when there is no guard or it does not parse."""
    try:
        tree = ast.parse(guard, mode="eval").body if guard else None
    except (SyntaxError, ValueError, RecursionError):
        return []
    if tree is None:
        return []
    return tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]


_HOLDERS = frozenset({"self", "server_args", "args"})


def _validation_of(key: str, flags: Mapping[str, FlagInfo]) -> Validation | None:
    """The flag combination a server-args ``raise`` refuses, when its guard is only tests of flags
    (given, left out, one of some values); None for anything else."""
    parts = key.split("\x1f")
    if len(parts) < 5 or parts[1] != "raise":
        return None
    out: list[tuple[str, str, tuple[str, ...]]] = []
    for atom in _guard_atoms(_guard(key)):
        op, node = "on", atom
        values: tuple[str, ...] = ()
        if isinstance(atom, ast.UnaryOp) and isinstance(atom.op, ast.Not):
            op, node = "off", atom.operand
        elif isinstance(atom, ast.Compare) and len(atom.ops) == 1:
            found = _string_test(atom)
            if found is None or not found[2]:
                return None
            op, node, values = "in", atom.left, found[1]
        if not (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _HOLDERS
        ):
            return None
        info = flags.get(node.attr)
        if info is None or (op != "in" and not info.is_bool):
            return None
        out.append((info.flag, op, values))
    return tuple(out) if len(out) >= 2 else None


def _string_test(atom: ast.expr) -> tuple[ast.expr, tuple[str, ...], bool] | None:
    """``x == "a"`` or ``x in ("a", "b")``: what is tested, the strings it is tested against, and
    whether those are all the test holds (no other kind of element beside them); None otherwise."""
    if not (isinstance(atom, ast.Compare) and len(atom.ops) == 1):
        return None
    right = atom.comparators[0]
    if isinstance(atom.ops[0], ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return atom.left, (right.value,), True
    if isinstance(atom.ops[0], ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
        texts = tuple(e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
        return atom.left, texts, len(texts) == len(right.elts)
    return None


def _passed_params(guard: str) -> tuple[tuple[str, bool], ...]:
    """The names a site's guard needs given, each with whether it is tested for truth: ``x`` of an
    atom ``x is not None`` or a bare ``x`` (``if score_mod is not None and y: raise``), in order."""
    out: list[tuple[str, bool]] = []
    for atom in _guard_atoms(guard):
        # ``not x is None``: the guard of a check after ``if x is None: return``.
        test, negated = _unnegated(atom)
        if isinstance(atom, ast.Name):
            out.append((atom.id, True))
        elif (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is if negated else ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            out.append((test.left.id, False))
    return tuple(dict.fromkeys(out))


class _EnvMarks(NamedTuple):
    """The variables :func:`_env_defaults` marks: on by default, turned on by the launch code, and
    turned off by it."""

    on: AbstractSet[str]
    launched: AbstractSet[str]
    launched_off: AbstractSet[str]


def site_reach(outcomes: Sequence[tuple[TargetFile, FileOutcome]], knowledge: Knowledge) -> RunReach:
    """The reach of every site of the run, from the facts its outcomes carry (asked in file order)."""
    facts = [_plain(o.facts) for _, o in outcomes if isinstance(o, Parsed) and o.facts is not None]
    sites = SiteReach([f for f in facts if f is not None], knowledge)
    # What each ``try`` around a call does with what it catches: a caller that ends a site's raise
    # is no way to that error (it still runs the code).
    handling = {
        str(f["path"]): f["handling"]
        for f in facts
        if isinstance(f, dict) and isinstance(f.get("handling"), dict) and "path" in f
    }
    narrowed: dict[tuple[str, ...], Reach] = {}
    table: dict[str, dict[str, Reach]] = {}
    on = frozenset(n for n, i in knowledge.env_info.items() if i.on_by_default)
    marks = _EnvMarks(on, knowledge.env_launched - on, knowledge.env_launched_off & on)
    for f, outcome in outcomes:
        if not isinstance(outcome, Parsed):
            continue
        for partial in outcome.records:
            qualname = _qualname(partial)
            by_q = table.setdefault(f.path, {})
            if qualname not in by_q:
                by_q[qualname] = (
                    _NO_CALLER
                    if qualname != "<module>" and sites.uncalled(f.path, qualname)
                    else _in_phase(
                        _env_defaults(tidy(user_ways(sites.of(f.path, qualname))), marks),
                        phase_of(f.path, qualname),
                    )
                )
            base = by_q[qualname]
            escape = partial.get(ESCAPES)
            key = str(partial.get("id", ""))
            caught = handling and isinstance(escape, list)
            # ``if score_mod is not None: raise``: only the calls that pass ``score_mod`` lead here.
            guard = _guard(key)
            line = partial.get("lineNumber")
            at = line if isinstance(line, int) else 0
            needed = sites.parameters_of(f.path, qualname, _passed_params(guard), at)
            # ``if kind == "self": ... elif kind == "cross": ... else: raise``: the calls that
            # give ``kind`` only those words never get there.
            words = sites.word_parameters(f.path, qualname, _word_tests(guard), at)
            other = [direct_entry(n, w) for n, w in sorted(words.items())]
            if (caught or needed or words) and qualname != "<module>" and base != _NO_CALLER:
                memo = (f.path, qualname, orjson.dumps(escape if caught else None).decode(), *needed, *other)
                if memo not in narrowed:
                    name = qualname.rpartition(".")[2]
                    catching = functools.partial(_ends, handling, name, escape) if caught else None
                    passes = functools.partial(sites.edge_passes, names=needed, words=words)
                    ends = functools.partial(_not_reaching, catching, passes)
                    if (needed or words) and not sites.passed_anywhere(f.path, qualname, needed, words):
                        # Called, but never with the argument the raise needs: only a direct call
                        # from the user's own code gets there.
                        names = ",".join(
                            [*(n.rstrip("?") for n in needed if n.rstrip("?") not in words), *other]
                        )
                        narrowed[memo] = (frozenset({(DIRECT, names, ())}),)
                    else:
                        narrowed[memo] = _env_defaults(
                            tidy(user_ways(sites.of(f.path, qualname, ends))), marks
                        )
                base = narrowed[memo]
            gates = gate_alternatives(
                guard,
                f.path,
                knowledge,
                functools.partial(sites.passed_selector, f.path, qualname),
                functools.partial(sites.test_selectors, f.path, qualname),
            )
            # A site under ``if __name__ == "__main__":`` runs when its file is run as a script,
            # whatever imports the module elsewhere: nothing of the served path is said of it.
            joined = _in_phase(
                _env_defaults(tidy(user_ways(with_gates(base, gates))), marks),
                phase_of(f.path, qualname),
            )
            if joined != by_q[qualname]:
                by_q[key] = joined
    records = {f.path: o.records for f, o in outcomes if isinstance(o, Parsed)}
    passed = passed_table(list(records.items()), sites)
    validations = sorted(
        {
            rule
            for f, o in outcomes
            if isinstance(o, Parsed) and is_knowledge_path(f.path)
            for partial in o.records
            if (rule := _validation_of(str(partial.get("id", "")), knowledge.flags_for(f.path))) is not None
        }
    )
    switches = frozenset(f.flag for flags in knowledge.scoped.values() for f in flags.values() if f.is_bool)
    optional = frozenset(f.flag for flags in knowledge.scoped.values() for f in flags.values() if f.optional)
    namespaces = {path: knowledge.namespace_of(path) for path in table}
    defaults: dict[str, str] = {}
    for flags in knowledge.scoped.values():
        for info in flags.values():
            # A valued flag that is never off: left out, it holds its default or the code's pick.
            if not (info.is_bool or info.optional or info.is_list) and info.flag not in sites.agreed:
                defaults.setdefault(info.flag, info.default)
    replaced = {
        i.flag: i.replaced_by
        for flags in sorted(knowledge.scoped.values(), key=len)
        for i in flags.values()
        if i.replaced_by
    }
    # A deprecated switch is turned on by the flag that replaced it too (the launch code maps
    # one onto the other): leaving the path means leaving out both.
    implied = {k: tuple(v) for k, v in knowledge.implied.items()}
    for old, new in sorted(replaced.items()):
        if old in switches and new in switches and new not in implied.get(old, ()):
            implied[old] = (*implied.get(old, ()), new)
    # ``--prefill-attention-backend``: one phase's own pick among ``--attention-backend``'s
    # choices; the code that a value selects runs for it as well.
    phased: dict[str, dict[str, tuple[str, ...]]] = {}
    for ns, flags in sorted(knowledge.scoped.items()):
        for info in flags.values():
            if info.is_bool or len(info.choices) < 2:
                continue
            phases = sorted(
                other.flag
                for other in flags.values()
                if other.dest.endswith(f"_{info.dest}") and other.choices == info.choices
            )
            if phases:
                phased.setdefault(ns, {})[info.flag] = tuple(phases)
    return RunReach(
        table,
        sites.choices,
        passed,
        switches,
        sites.agreed,
        optional,
        sites.forced,
        sites.scoped_choices,
        namespaces,
        dict(sorted(defaults.items())),
        implied,
        # Every flag, with no choices where its declaration lists none (it takes any value).
        {ns: {i.flag: i.choices for i in flags.values()} for ns, flags in sorted(knowledge.scoped.items())},
        knowledge.picked,
        replaced,
        phased,
        {
            # A switch the launch detects from the data it is given maps to "": its off spelling
            # forces a reading of that data, which is no workaround.
            i.flag: "" if i.detected else i.off_flag
            for _, flags in sorted(knowledge.scoped.items())
            for i in flags.values()
            if i.off_flag
        },
        validations,
        sites.draft_names,
        _tested_values(table, sites, records),
        sites.model_sets,
        sites.override_paths,
        knowledge.rewritten,
    )


def _refused_values(records: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The string values a file's raises test for last (``elif value == "aiter": raise ...``): a
    value its own code refuses somewhere is no other choice to offer there."""
    out: set[str] = set()
    for partial in records:
        key = str(partial.get("id", ""))
        if key.split("\x1f", 2)[1:2] != ["raise"]:
            continue
        atoms = _guard_atoms(_guard(key))
        found = _string_test(atoms[-1]) if atoms else None
        if found is not None:
            out.update(found[1])
    return frozenset(out)


def _tested_values(
    table: Mapping[str, Mapping[str, Reach]],
    sites: SiteReach,
    records: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, dict[str, tuple[str, ...]]]:
    """path -> valued flag of its reach -> the values its code tests for (see :attr:`RunReach.tested`),
    less those a raise of the same file refuses (its ``records`` read only for such a path)."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for path, by_q in sorted(table.items()):
        named = {s[1] for reach in by_q.values() for conj in reach for s in conj if s[0] == "flag" and s[2]}
        if not named:
            continue
        found = {f: v for f, v in sites.tested_values(path).items() if f in named}
        if not found:
            continue
        refuses = _refused_values(records.get(path, ()))
        kept = {f: tuple(x for x in v if x not in refuses) for f, v in found.items()}
        kept = {f: v for f, v in kept.items() if v}
        if kept:
            out[path] = kept
    return out


def _env_defaults(reach: Reach, marks: _EnvMarks) -> Reach:
    """``reach`` with each boolean variable that defaults to true marked so (values ``("on",)``):
    such a path runs unless the variable is turned off, and is left by setting it to 0. A variable
    the launch code also turns on itself is marked ``("launch",)``; one set to 0 that the launch
    code also turns off itself, ``("0", "launch")``."""
    on, launched, launched_off = marks
    if not any(
        s[0] == "env" and (s[1] in on or s[1] in launched or s[1] in launched_off) for c in reach for s in c
    ):
        return reach

    def marked(s: Selector) -> Selector:
        if s[0] != "env":
            return s
        if s[1] in on and not s[2]:
            return ("env", s[1], _ON_BY_DEFAULT)
        if s[1] in launched and not s[2]:
            return ("env", s[1], _LAUNCHED)
        if s[1] in launched_off and s[2] == ("0",):
            return ("env", s[1], _OFF_AT_LAUNCH)
        return s

    return tuple(frozenset(marked(s) for s in c) for c in reach)
