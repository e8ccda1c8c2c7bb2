"""Solutions, trigger scenarios, common situations and prevention tips."""

from __future__ import annotations

import ast
import re

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import Site
from extractor.prose.classify import FLAG_IN_MSG_RE, Kind
from extractor.prose.commands import env_assign, flag_args, other_choice
from extractor.prose.constraints import AtomView, Constraint, best_constraints, literal, simplify, unparse
from extractor.prose.knowledge import Knowledge
from extractor.prose.reads import Reads
from extractor.prose.wording import constraint_words, fmt_values, loop_end_words, short_path


def _flag_solution(c: Constraint) -> str:
    f = f"`{c.name}`"
    info = c.info
    if c.op == "truthy":
        if info and info.is_bool:
            return f"Drop {f} from the launch command"
        return f"Leave {f} unset (remove it from the launch command)"
    if c.op == "falsy":
        return (
            f"Add {f} to the launch command" if info and info.is_bool else f"Pass {f} with a non-empty value"
        )
    if c.op == "is-none":
        return f"Pass {f} explicitly (it is unset when this error fires)"
    if c.op == "not-none":
        return f"Omit {f} so the default applies"
    vals = fmt_values(c.values)
    if c.op == "in":
        other = other_choice(info, c.values)
        hint = f", e.g. {c.name} {other}" if other else ""
        return f"Set {f} to a value other than {vals}{hint}"
    if c.op == "not-in":
        return f"Set {f} to one of {vals}"
    if c.op == "eq":
        if c.values and c.values[0] in ("True", "False", "None"):
            return f"Change {f} so it is not {c.values[0]}"
        return f"Use a {f} value other than {vals}"
    if c.op == "ne":
        return f"Set {f} to {vals}"
    bound = {"lt": "at least", "le": "above", "gt": "at most", "ge": "below"}.get(c.op)
    if bound:
        return f"Set {f} to a value {bound} {vals}"
    return f"Change {f}"


def _env_solution(c: Constraint) -> str:
    e = f"`{c.name}`"
    if c.op == "truthy":
        return f"Unset the environment variable {e} (or set it to 0/false)"
    if c.op in ("falsy", "is-none"):
        return f"Export {e} with a suitable value before launching"
    if c.op == "not-none":
        return f"Unset the environment variable {e}"
    vals = fmt_values(c.values)
    if c.op in ("in", "eq"):
        return f"Set {e} to something other than {vals}"
    if c.op in ("not-in", "ne"):
        return f"Set {e} to {vals}"
    bound = {"lt": "at least", "le": "above", "gt": "at most", "ge": "below"}.get(c.op)
    return f"Set {e} to a value {bound} {vals}" if bound else f"Change {e}"


def _model_subject(v: AtomView) -> str:
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\((?:self\.)?(?:model_config|hf_config|config)", v.text)
    if m:
        return f"a checkpoint that `{m.group(1)}` recognises"
    return "a model whose configuration satisfies the check"


def solutions_of(site: Site, views: list[AtomView], kind: Kind) -> list[str]:
    out: list[str] = []
    for v in views:
        if v.constraints:
            out.extend(_flag_solution(c) if c.kind == "flag" else _env_solution(c) for c in v.constraints)
            continue
        if v.reads.flags:
            names = ", ".join(f"`{f.flag}`" for f in v.reads.flags)
            out.append(f"Change {names} so that `{v.neg or 'not ' + v.text}` holds instead")
            continue
        if v.reads.envs:
            names = ", ".join(f"`{e}`" for e in v.reads.envs)
            out.append(
                f"Change the environment variable {names} so that `{v.neg or 'not ' + v.text}` holds instead"
            )
            continue
        if v.model:
            neg = v.neg
            out.append(f"Use {_model_subject(v)} (one where `{neg or 'not ' + v.text}`)")
            continue
        if v.hardware:
            out.append(
                f"Run on a device/platform where `{v.text}` is false, or pick a backend that supports this one"
            )
            continue
        # Type and request checks only matter for the innermost atom: the outer ones select the
        # branch the check sits in, and "fixing" them would just reach another branch.
        if v is not views[-1]:
            continue
        if v.isinstance_ is not None:
            subj, types, positive = v.isinstance_
            t = " or ".join(types)
            out.append(f"Pass `{subj}` as {'something other than' if positive else 'a'} {t}")
            continue
        if v.request:
            neg = v.neg
            out.append(f"Send requests for which `{neg or 'not ' + v.text}` holds")
    handled = _handled_values(views)
    if handled is not None:
        subject, values = handled
        out.insert(0, f"Use a `{subject}` this code handles: {', '.join(values)}")
    # Flags named only in the message (the guard reads them through a helper).
    if not any("`--" in s for s in out) and site.message is not None:
        for f in dict.fromkeys(FLAG_IN_MSG_RE.findall(site.message.template)):
            out.append(f"Revisit `{f}` in the launch command (the message names it)")
            if len(out) >= 3:
                break
    if not out:
        out.extend(_fallback_solutions(site, views, kind))
    elif views and views[-1].expr is not None and views[-1].atom.kind != "except":
        last = views[-1]
        if not (
            last.reads.flags
            or last.reads.envs
            or last.model
            or last.hardware
            or last.request
            or last.isinstance_
        ):
            # The settings above only select the path; the check itself is on program state.
            where = f"`{site.qualname}`" if site.qualname not in ("", "<module>") else f"`{site.path}`"
            out.append(f"If the settings must stay, make sure `{last.neg}` holds when {where} runs")
    return list(dict.fromkeys(out))[:8]


def _handled_values(views: list[AtomView]) -> tuple[str, list[str]] | None:
    """For an ``if/elif`` chain over one value (``x != 'a'``, ``x != 'b'``, ``x not in (...)``
    leading to the site): that value and the literals the chain accepts."""
    groups: dict[str, list[str]] = {}
    for v in views:
        if v.expr is None:
            continue
        for part in split_and(simplify(v.expr)):
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
                continue
            op = part.ops[0]
            if not isinstance(op, ast.NotEq | ast.NotIn | ast.IsNot):
                continue
            lit = literal(part.comparators[0])
            if lit is None or lit == ("None",):
                continue
            subject = unparse(part.left)
            if not subject:
                continue
            rendered = [
                repr(x) if isinstance(c, ast.Constant) and isinstance(c.value, str) else x
                for x, c in zip(lit, _literal_nodes(part.comparators[0]), strict=False)
            ]
            groups.setdefault(subject, []).extend(rendered)
    best = max(groups.items(), key=lambda kv: len(kv[1]), default=None)
    if best is None or len(best[1]) < 2:
        return None
    return best[0], list(dict.fromkeys(best[1]))[:12]


def _literal_nodes(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return list(node.elts)
    return [node]


def _fallback_solutions(site: Site, views: list[AtomView], kind: Kind) -> list[str]:
    where = f"`{site.qualname}`" if site.qualname not in ("", "<module>") else f"`{site.path}`"
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    out = []
    if kind.background == "not-implemented":
        out.append(f"Use a configuration, backend or subclass that implements {where} instead of this path")
    elif kind.background == "missing-dependency":
        out.append(f"Install the package or version that {where} needs, then restart")
    elif kind.background == "io-error":
        out.append(f"Check that the files and paths {where} reads exist and are readable")
    elif kind.background == "network-error":
        out.append(f"Check that the endpoint {where} connects to is up and reachable, then retry")
    elif kind.background == "timeout":
        out.append(f"Retry, or raise the timeout that {where} waits on")
    elif kind.background == "resource-exhausted":
        out.append(f"Lower the load or raise the capacity {where} allocates from")
    if plain:
        neg = plain[-1].neg
        out.append(f"Make sure `{neg or 'not (' + plain[-1].text + ')'}` holds before {where} runs")
    for h in site.guard.handlers[:1]:
        out.append(f"Fix the underlying `{h}` raised inside {where}; it is chained as the cause")
    if kind.background == "internal-invariant":
        out.append(
            f"Report it upstream with the traceback and launch command: {where} should not reach this state"
        )
    if not out:
        out.append(f"Avoid calling {where} on this path, or catch `{site.error_class}` around it")
    return out


def trigger_scenarios(site: Site, views: list[AtomView], total: Reads, knowledge: Knowledge) -> str:
    acts: list[str] = []
    best = {c.name: c for c in best_constraints(views)}
    for v in views:
        for c in v.constraints:
            if best.get(c.name) is not c:
                continue
            if c.kind == "flag":
                args = flag_args(c, True)
                if args:
                    acts.append("launching with `" + " ".join(args) + "`")
                elif args == []:
                    acts.append(f"launching without `{c.name}`")
                else:
                    acts.append(f"launching with {constraint_words(c)}")
            else:
                a = env_assign(c, True)
                acts.append(f"exporting `{a}`" if a else f"leaving `{c.name}` unset")
        if v.constraints:
            continue
        if v.reads.flags:
            acts.append(
                "launching with "
                + ", ".join(f"`{f.flag}`" for f in v.reads.flags)
                + f" such that `{v.simple}`"
            )
        elif v.reads.envs:
            acts.append("setting " + ", ".join(f"`{e}`" for e in v.reads.envs) + f" such that `{v.simple}`")
        elif v.model:
            acts.append(f"loading a model for which `{v.simple}`")
        elif v.hardware:
            acts.append(f"running where `{v.simple}`")
        elif v.request:
            acts.append(f"sending a request for which `{v.simple}`")
    where = _scope_ref(site)
    if acts:
        return f"Triggered by {', together with '.join(acts[:5])}; the check is in {where}."
    if not views and site.after_loop:
        return f"{where} (line {site.line}) raises {loop_end_words(site)}."
    if not views:
        return f"Any call that reaches {where} (line {site.line}) raises; there is no guard in front of it."
    if site.guard.handlers and all(v.atom.kind == "except" for v in views):
        return f"An exception of type {', '.join(site.guard.handlers)} inside {where} is converted into {site.error_class}."
    first = views[-1].simple
    return f"Code calls {where} in a state where `{first}` holds ({len(views)} condition{'s' if len(views) > 1 else ''} in all)."


def _scope_ref(site: Site) -> str:
    if site.qualname in ("", "<module>"):
        return f"module-level code of {short_path(site.path)}"
    return f"{site.qualname} ({short_path(site.path)}:{site.line})"


_SITUATIONS = {
    "model-feature-mismatch": "reusing a launch command or feature written for one model family with a checkpoint of another family",
    "flag-conflict": "copying a launch script that enables options this path cannot combine, or adding one flag without its companions",
    "invalid-value": "a caller passing a value outside the accepted range, often derived from the model config or a request",
    "missing-dependency": "a fresh environment without the optional extra, or a package version that drifted",
    "hardware-unsupported": "running on a GPU generation or accelerator this kernel/backend path was not built for",
    "not-implemented": "selecting a backend, mode or model variant whose implementation of this path is still missing",
    "resource-exhausted": "large batches, long contexts or a memory fraction set too tight for the device",
    "internal-invariant": "unusual scheduling, a state race or an upstream change that broke an assumption",
    "io-error": "a wrong path, a partially downloaded checkpoint or missing permissions",
    "network-error": "a peer process that died or has not started yet, a firewall, or a wrong host/port",
    "timeout": "a slow or overloaded peer, first-time compilation/warm-up, or a timeout set too low",
    "bad-request": "a client sending parameters the endpoint does not accept",
}
# With flags or env vars in the guard the user's launch settings are the usual cause.
_SITUATIONS_CONFIG = {
    "invalid-value": "a launch setting outside the accepted range, or a misspelled choice, in the command line or config file",
    "internal-invariant": "a combination of launch settings this code path does not expect",
}


def common_situations(site: Site, views: list[AtomView], total: Reads, kind: Kind, tags: list[str]) -> str:
    config = bool(total.flags or total.envs)
    base = (_SITUATIONS_CONFIG.get(kind.background) if config else None) or _SITUATIONS[kind.background]
    area = tags[0] if tags else "sglang"
    head = f"In the {area} code ({short_path(site.path)}), typically {base}"
    bits = []
    if total.flags:
        bits.append(", ".join(f.flag for f in total.flags[:4]))
    if total.envs:
        bits.append(", ".join(total.envs[:3]))
    if bits:
        return f"{head}; the settings involved are {' and '.join(bits)}."
    plain = [v for v in views if v.atom.kind != "except"]
    if plain:
        return f"{head}; here it shows up as `{plain[-1].simple}`."
    if site.guard.handlers:
        return f"{head}; here it follows a caught {', '.join(site.guard.handlers)}."
    return f"{head}; reached through {_scope_ref(site)}."


def prevention_tips(site: Site, views: list[AtomView], total: Reads, kind: Kind) -> list[str]:
    tips = []
    if total.flags:
        names = ", ".join(f.flag for f in total.flags[:4])
        tips.append(f"Check {names} together in your launch wrapper before starting the server")
    if total.envs:
        tips.append(
            "Set "
            + ", ".join(total.envs[:3])
            + " explicitly in the deployment environment instead of inheriting it"
        )
    if any(v.model for v in views):
        tips.append(f"Tie model-specific options to a model-family check before calling {_scope_ref(site)}")
    if kind.background == "missing-dependency":
        tips.append("Pin the optional dependencies in the image and import-test them at build time")
    if kind.background == "hardware-unsupported":
        tips.append("Select backends per device type in the launch script rather than hard-coding them")
    if kind.background == "bad-request":
        tips.append("Validate request parameters on the client side before sending")
    isin = [v.isinstance_ for v in views if v.isinstance_ is not None]
    if isin:
        subj, types, _positive = isin[0]
        tips.append(f"Type-annotate and check `{subj}` ({' or '.join(types)}) at the call boundary")
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    if plain and not total.flags and not total.envs:
        neg = plain[-1].neg
        if neg:
            tips.append(
                f"Assert `{neg}` where the inputs of {site.qualname if site.qualname != '<module>' else 'this module'} are built"
            )
    if not tips:
        tips.append(f"Add a test that exercises {_scope_ref(site)} with the inputs your deployment uses")
    return list(dict.fromkeys(tips))
