"""sglang-aware prose for one site: flags, environment variables, and the human-facing fields.

Everything here is derived from the site's own facts (:class:`extractor.analysis.facts.Site`) and from what
the target declares about its command line (:class:`extractor.prose.knowledge.Knowledge`); no network and
no language model. :func:`enrich` is pure and deterministic and never raises: an odd site gets
plainer prose, not an exception.

The pieces live beside this module: :mod:`.reads` (which flag and env reads the guard makes),
:mod:`.constraints` (the shape of one atom), :mod:`.classify`, :mod:`.wording`, :mod:`.commands`,
:mod:`.solutions` and :mod:`.tags`; this module assembles them into one :class:`Prose`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from extractor.analysis.facts import GuardAtom, Site
from extractor.prose.advice import INTERNAL_CHECK, NOT_EXPECTED, advise, condition_code
from extractor.prose.argv import argv_flag
from extractor.prose.cause import Cause, Roles, cause_of, message_text, split_roles
from extractor.prose.classify import classify
from extractor.prose.commands import call_of, launcher
from extractor.prose.config_fields import attribute_keys, config_keys, config_word
from extractor.prose.constraints import AtomView, atom_view, bound_collection, simplify
from extractor.prose.device import DEVICE_RULE, PLATFORM_RULE, device_spec, gate_platforms, tensor_platforms
from extractor.prose.dtype import model_dtype
from extractor.prose.fixes import OtherCheck
from extractor.prose.from_config import config_entries
from extractor.prose.imports import guard_package, names_distribution, own_distribution
from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.prose.origins import constant_values, refine
from extractor.prose.passed import INTERNAL_CAUSE, data_spec, internal_sentence, pending_spec, split_spec
from extractor.prose.passed_on import passed_on_cause
from extractor.prose.platform_method import platform_of_method, with_platform_method
from extractor.prose.reads import ReadContext, Reads, merged_reads, read_context, site_reads
from extractor.prose.scripts import own_flags_named
from extractor.prose.sentences import split_sentences
from extractor.prose.solutions import prevention_tips
from extractor.prose.tags import site_tags, try_catch_pattern, type_guard
from extractor.prose.wording import documentation_of, kebab
from extractor.prose.world_size import told_split, with_world_sizes

__all__ = ["Prose", "Siblings", "enrich"]


@dataclass(frozen=True)
class Prose:
    """The prose fields of one record (names as in the schema)."""

    errorType: str
    severity: str
    documentation: str
    triggerScenarios: str
    commonSituations: str
    solutions: list[str]
    exampleFix: str
    handlingStrategy: str
    validationCode: str
    typeGuard: str | None
    tryCatchPattern: str | None
    preventionTips: list[str]
    tags: list[str]
    backgroundTag: str
    errorCode: str | None
    passed: dict[str, Any] | None = None
    """What the run needs to restate an internal check on a value its callers fill from a flag
    (:mod:`.passed`); not a record field."""
    device: dict[str, Any] | None = None
    """The internal wording of a tensor device check, for a path the run finds runs only on that
    device (:mod:`.device`); not a record field."""
    dead: bool = False
    """A check that cannot fail as the code stands (:func:`_dead`): no way in leads to its error;
    not a record field (the partial record carries it as :data:`DEAD_KEY`)."""


DEAD_KEY = "_dead"
"""The partial record's key for a dead check (dropped before the record is built)."""


@dataclass(frozen=True)
class Reach:
    """Facts from outside the site's function (callers, registries) about what selects it.

    ``context`` sentences join the documentation after the gates ("reached only with ...");
    ``selectors`` are solutions that turn off what selects the path. Empty when nothing is known.
    """

    context: tuple[str, ...] = ()
    selectors: tuple[str, ...] = ()


def enrich(
    site: Site,
    knowledge: Knowledge,
    constants: Mapping[str, str] | None = None,
    reach: Reach | None = None,
    siblings: Siblings | None = None,
) -> Prose:
    """The prose fields for ``site``. ``constants`` are the module-level string constants of the
    site's file (:func:`extractor.prose.knowledge.module_constants`), used to resolve env names;
    ``siblings`` the file's other sites (a fix must not trip another check of the function)."""
    try:
        return _enrich(site, knowledge, constants, reach or Reach(), siblings)
    except Exception:
        return _minimal(site)


class Siblings:
    """The sites of one file, and the other checks of a site's function as fixes test them
    (each read once per file)."""

    def __init__(self, sites: Sequence[Site]) -> None:
        self.by_scope: dict[str, list[Site]] = {}
        for s in sites:
            self.by_scope.setdefault(s.qualname, []).append(s)
        self._memo: dict[int, OtherCheck] = {}
        self._asks: dict[int, tuple[frozenset[str], str] | None] = {}

    def others(
        self, site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None
    ) -> list[OtherCheck]:
        out = []
        for s in self.by_scope.get(site.qualname, ()):
            if s is site or s.qualname in ("", "<module>"):
                continue
            found = self._memo.get(id(s))
            if found is None:
                ctx = read_context(s, knowledge, constants)
                per_atom, _ = site_reads(s, ctx)
                views = [atom_view(a, r, ctx) for a, r in zip(s.guard.atoms, per_atom, strict=True)]
                plain = [v for v in views if v.expr is not None and v.atom.role != "survivor"]
                found = OtherCheck(
                    s.line,
                    tuple(v.expr for v in plain if v.expr is not None),
                    tuple(tuple(v.constraints) for v in plain),
                    ctx,
                )
                self._memo[id(s)] = found
            out.append(found)
        return out

    def required_flags(
        self, site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None
    ) -> list[tuple[str, int]]:
        """Flags an earlier assert of the same function on the same path requires to be set
        (``assert args.backend is not None``): the site is reached only with them given, so
        they are reach, not advice. The assert must sit on a path the site's own guard implies
        (its other conditions are among the site's) and nothing of its function may catch it."""
        mine = {a.text for a in site.guard.atoms}
        out: list[tuple[str, int]] = []
        for s in self.by_scope.get(site.qualname, ()):
            if s is site or s.kind != "assert" or s.line >= site.line:
                continue
            if s.handled is not None and s.handled.caught is not None:
                continue
            if s.qualname in ("", "<module>"):
                continue
            if id(s) not in self._asks:
                self._asks[id(s)] = _asked_flag(s, knowledge, constants)
            asked = self._asks[id(s)]
            if asked is None:
                continue
            path, flag = asked
            if path <= mine and flag not in {f for f, _ in out}:
                out.append((flag, s.line))
        return out


def _asked_flag(
    s: Site, knowledge: Knowledge, constants: Mapping[str, str] | None
) -> tuple[frozenset[str], str] | None:
    """The path conditions of assert ``s`` and the one flag it requires to be given, if its
    test is exactly that (the assert fails when the flag is unset or off)."""
    ctx = read_context(s, knowledge, constants)
    per_atom, _ = site_reads(s, ctx)
    views = [atom_view(a, r, ctx) for a, r in zip(s.guard.atoms, per_atom, strict=True)]
    roles = split_roles(views)
    if len(roles.deciding) != 1 or len(roles.deciding[0].constraints) != 1:
        return None
    c = roles.deciding[0].constraints[0]
    if c.kind != "flag" or c.op not in ("is-none", "falsy") or c.values:
        return None
    return frozenset(v.atom.text for v in [*roles.gates, *roles.survivors]), c.name


# A message sentence that warns what letting the case through risks.
_RISK_RE = re.compile(
    r"\b(?:may|might|can|could) (?:lead|cause|result|produce|break)\b|\b(?:unsafe|at your own risk|undefined behaviou?r)\b",
    re.I,
)


def _risk_words(message: str) -> str:
    """The sentence (or clause) of ``message`` that warns what letting the case through risks."""
    for part in (c for s in split_sentences(message) for c in re.split(r";\s*", s)):
        if _RISK_RE.search(part):
            return " ".join(part.split())
    return ""


def _override_of(site: Site, roles: Roles, cause: Cause, knowledge: Knowledge) -> str | None:
    """The environment variable that only lets a refused case through: the check fails while it
    is off (its default) under a test of its own in front (``if context_length > derived: if
    envs.ALLOW.get(): warn() else: raise``). That test is the case; the variable is no cause."""
    if cause.kind != "env" or not roles.gates or not any(v.expr is not None for v in roles.gates):
        return None
    cs = [c for v in roles.deciding for c in v.constraints]
    names = {c.name for c in cs}
    if len(names) != 1 or any(c.kind != "env" or c.op != "falsy" for c in cs):
        return None
    name = next(iter(names))
    info = knowledge.env_of(name)
    if info is None or info.on_by_default:
        return None
    return name


def _as_override(prose: Prose, site: Site, roles: Roles, env: str, launch: str) -> Prose:
    """``prose`` with the gated case as what trips the check, and the variable as the override it is."""
    # The case is everything the path and the check test besides the variable itself.
    case = condition_code([*roles.gates, *(v for v in roles.deciding if not v.constraints)])
    where = site.qualname or site.path
    risk = _risk_words(message_text(site))
    warned = f' (the message warns: "{risk}")' if risk else ""
    sols = [s for s in prose.solutions if env not in s]
    return dataclasses.replace(
        prose,
        triggerScenarios=f"A setup for which `{case}` holds in {where}: the check refuses that case "
        f"unless `{env}` is set, and it is unset by default.",
        commonSituations=f"`{where}` meeting `{case}` with `{env}` left at its default (off).",
        solutions=[
            f"Change what makes `{case}` hold (the message says which values it compared): that is "
            "the case the check refuses",
            *sols,
            f"Or set `{env}=1` to let the case through{warned}",
        ],
        exampleFix=f"# before: `{case}` holds, `{env}` left unset\n{launch}\n"
        f"# after: change what makes it hold; or, knowing what the case risks, let it through\n"
        f"{env}=1 {launch}",
    )


def _loop_end(prose: Prose, site: Site) -> Prose:
    """A raise after a loop that failed on every pass: what it tried (a service, a resource, each
    of its candidates) is what to look at, before any bug report."""
    said = internal_sentence(prose.documentation)
    line = site.after_loop
    if site.loop_over:
        # A search: none of the candidates matched what was looked for.
        cause = (
            f"Cause: none of what the loop at line {line} goes through (`{site.loop_over}`) matched "
            "or worked: what was looked for (the message says what) is not among them."
        )
        situation = f"`{site.qualname or site.path}` finding nothing that fits in `{site.loop_over}`."
        first = (
            f"Check what was asked for against what the loop at line {line} goes through "
            f"(`{site.loop_over}`): the message and the log lines before it say what was looked for; "
            "ask for one that is there, or make the missing one available"
        )
        last = "If what was asked for is there and it still fails, report it"
    else:
        cause = (
            f"Cause: every pass of the loop at line {line} failed; what it tries each time (a call to a "
            "service, a wait for a resource, an allocation) is what failed, and the message and the log "
            "lines before it say which."
        )
        situation = (
            f"`{site.qualname or site.path}` giving up after its loop at line {line} failed on every pass."
        )
        first = (
            "Find why every pass failed: the message and the warnings logged before it name what the "
            "loop waited for or tried; check that it is up, reachable and configured, then retry"
        )
        last = "If what the loop tries is up and it still fails every time, report it"
    return dataclasses.replace(
        prose,
        documentation=prose.documentation.replace(said, cause) if said else prose.documentation,
        commonSituations=situation,
        solutions=[first, *(_REPORT_RE.sub(last, s) for s in prose.solutions)],
    )


# The bug report of an internal check, said as the last resort it is after a loop gave up.
_REPORT_RE = re.compile(rf"^{re.escape(INTERNAL_CHECK)}`[^`]*`: {re.escape(NOT_EXPECTED)}\. Report it")


def _ruled_out(prose: Prose, site: Site, dead: tuple[GuardAtom, GuardAtom]) -> Prose:
    """A check its own path rules out: say so, and that what a user meets is an earlier check."""
    failing, path = dead
    if path.text.rpartition(".")[2] == "TYPE_CHECKING":
        # The gate the path "runs only when" is the block no run enters: said once, below.
        gate = f"`{path.text}`"
        doc = prose.documentation.replace(f"This check runs only when {gate}. ", "")
        doc = doc.replace(f"; {gate}", "").replace(f"{gate}; ", "")
        return _dead(
            dataclasses.replace(prose, documentation=doc),
            site,
            f"This check never runs: it sits under `if {path.text}:` (line {path.line}), which is "
            "false when the program runs (only a type checker reads that block). An error with this "
            "message comes from other code than this version.",
            triggerScenarios=f"None: line {site.line} sits under `if {path.text}:`, which never runs.",
            commonSituations=f"None: this check is for type checkers; under `if {path.text}:` it never runs.",
        )
    where = f"`{path.text}` (line {path.line})"
    # ``assert not x`` fails where ``x`` holds: say that, not ``not not x``.
    failing = dataclasses.replace(failing, text=failing.text.removeprefix("not not "))
    return _dead(
        prose,
        site,
        f"This check cannot fail as the code stands: the path to it already requires {where}, which "
        f"rules out `{failing.text}`. An error with this message comes from an earlier check that the "
        "test at that line decides, or from other code than this version.",
        triggerScenarios=f"None as the code stands: the path to line {site.line} already requires "
        f"{where}, so `{failing.text}` cannot hold there.",
        commonSituations=f"None: this is a dead check. The path to it requires {where}; an earlier "
        "check decides the case, and its own record says what trips it.",
    )


# What a dead check's record says in place of an internal invariant's "reaching it is a bug".
_DEAD_CAUSE = "Cause: nothing in this version: the check cannot fail where it stands (below)."


def _dead(prose: Prose, site: Site, why: str, *, triggerScenarios: str, commonSituations: str) -> Prose:
    """A dead check's record: why it cannot fail, and that a traceback ending here ran other code."""
    call = call_of(site)
    return dataclasses.replace(
        prose,
        documentation=f"{prose.documentation.replace(INTERNAL_CAUSE, _DEAD_CAUSE)} {why}",
        triggerScenarios=triggerScenarios,
        commonSituations=commonSituations,
        solutions=[
            "This check cannot fail in this version of sglang, so a traceback that ends here ran other "
            "code: compare its file and line with the installed sglang (`python3 -m sglang.check_env` "
            "prints the version) and look the message up in the dataset of that version. If they "
            "match, report it to sglang with the full message and traceback",
        ],
        exampleFix=f"# before: {call} fails a check this version rules out\n"
        "# after: find out which sglang version runs\npython3 -m sglang.check_env",
        # Nothing a caller passes can trip it either: no restatement through the callers.
        passed=None,
        dead=True,
    )


def _enrich(
    site: Site,
    knowledge: Knowledge,
    constants: Mapping[str, str] | None,
    reach: Reach,
    siblings: Siblings | None = None,
    forced: Cause | None = None,
) -> Prose:
    ctx = read_context(site, knowledge, constants)
    per_atom, _ = site_reads(site, ctx)
    views = [atom_view(a, r, ctx) for a, r in zip(site.guard.atoms, per_atom, strict=True)]
    if getattr(ctx.constants, "script_flags", None):
        views = own_flags_named(views, site.path)
    roles = split_roles(with_world_sizes(views, ctx))
    # An earlier check that passed is involved only through what its passing pins on its own
    # (``algorithm in ('EAGLE', 'EAGLE3')``): the ragged-verify check before an assert, ``not
    # ragged or not enable_lora``, says nothing of ``--enable-lora`` there.
    involved = [v for v in views if v.atom.role != "survivor"]
    total = merged_reads(_pinned(v) if v.atom.role == "survivor" else v.reads for v in views)
    cause = forced or refine(
        site,
        roles,
        cause_of(
            site,
            roles,
            [c for v in roles.deciding for c in v.constraints],
            knowledge.flags_for(site.path),
            frozenset(f.flag for f in getattr(ctx.constants, "script_flags", {}).values()),
        ),
    )
    if cause.kind == "dependency":
        own = own_distribution(site.path)
        if not cause.names:
            atoms = [a.test for a in site.guard.atoms if a.test is not None]
            package = guard_package(atoms, getattr(ctx.constants, "guarded", {}))
            if package is not None:
                cause = Cause("dependency", (package,), cause.rule)
            elif own is not None:
                cause = Cause("dependency", (own,), "own-extension")
        if own is not None and any(names_distribution(n, own) for n in cause.names):
            # The package named is the one this code belongs to: it is installed (its code runs),
            # and what failed is its own compiled part.
            cause = Cause("dependency", (own,), "own-extension")
    if cause.kind == "internal":
        keys = config_keys(site, roles.deciding, getattr(ctx.constants, "config_fields", {}))
        if keys:
            cause = Cause("model", (config_word(site), *keys), "from-config")
        elif (entries := config_entries(site, roles.deciding)) is not None:
            # A config class's ``from_config`` refusing what the checkpoint's config holds.
            cause = Cause("model", entries, "config-entries")
    if cause.kind in ("internal", "model") and cause.rule != "from-config" and "/models/" in site.path:
        # ``self.num_mtp_layers != 1`` where a model's constructor copied it from the config: the
        # checkpoint's key decides it, and the fix names that key, not the attribute. (Outside
        # the model files a ``config`` is as often sglang's own: a runner's, a backend's.)
        keys = attribute_keys(roles.deciding, ctx.config_attrs)
        if keys:
            cause = Cause("model", keys, "config-attribute")
    # A path the class read from the raw command line is that flag's (``--config``), not any path.
    if cause.kind == "internal" or cause.rule == "missing-path":
        flag = argv_flag(site, ctx.flags, getattr(ctx.constants, "argv", {}))
        if flag is not None:
            cause = Cause("flag", (flag,), "argv-flag")
        elif cause.kind == "internal" and (md := model_dtype(site, roles.deciding, ctx.flags)) is not None:
            cause = Cause("flag", (md.flag.flag,), "model-dtype")
    if (cause.kind == "internal" or cause.rule == "deciding-model") and (
        tp := told_split(message_text(site), ctx.flags)
    ) is not None:
        # The message blames the tensor-parallel size against the model's dimensions: the
        # dimension is the checkpoint's, the size the launch's (``hidden_size % tp_size``).
        cause = Cause("flag", (tp.flag,), "message-split", with_model=True)
    if cause.rule == "unknown-keys":
        cause = flag_of_keys(site, cause, ctx.flags)
    # Flags a handed-on message names are its advice for the error underneath, not what this raise tests.
    if (cause.kind == "internal" or cause.rule == "message-flag") and site.passes_on is not None:
        cause = passed_on_cause(site, ctx) or cause
    dead = site.guard.ruled_out
    if dead is not None and forced is None:
        # What the path requires already rules the failing condition out: no setting trips it.
        cause = Cause("internal", (), "ruled-out")
    kind = classify(site, cause)
    tags = site_tags(site, involved, total, kind)
    shown = constant_values(site, [*roles.deciding, *roles.gates], ctx.constants)
    others = (lambda: siblings.others(site, knowledge, constants)) if siblings is not None else None
    script_flags = (
        frozenset(f.flag for f in getattr(ctx.constants, "script_flags", {}).values())
        if getattr(ctx.constants, "runnable", False)
        else frozenset()
    )
    advice = advise(site, knowledge, roles, cause, reach.selectors, shown, others, script_flags)
    context = list(reach.context)
    if siblings is not None:
        tested = {c.name for v in views for c in v.constraints}
        for flag, line in siblings.required_flags(site, knowledge, constants):
            if flag not in tested:
                context.append(
                    f"It is reached only with `{flag}` given: without it the assert at line {line} "
                    "of the same function fails first."
                )
    prose = Prose(
        errorType=kind.error_type,
        severity=kind.severity,
        documentation=documentation_of(
            site,
            roles.deciding,
            roles.gates,
            total,
            advice.cause_sentence,
            context,
            roles.survivors,
            shown,
        ),
        triggerScenarios=advice.trigger,
        commonSituations=advice.situations,
        solutions=advice.solutions,
        exampleFix=advice.example_fix,
        handlingStrategy=kind.handling,
        validationCode=validation_code(site, views),
        typeGuard=type_guard(views),
        tryCatchPattern=try_catch_pattern(site),
        preventionTips=prevention_tips(site, involved, total, kind),
        tags=tags,
        backgroundTag=kind.background,
        errorCode=site.error_code,
        passed=pending_spec(site, roles, ctx, cause)
        or data_spec(site, roles, cause)
        or split_spec(site, roles, ctx, cause),
    )
    if dead is not None and forced is None:
        prose = _ruled_out(prose, site, dead)
    override = _override_of(site, roles, cause, knowledge) if forced is None else None
    if override is not None:
        prose = _as_override(prose, site, roles, override, launcher(site, knowledge))
    if site.after_loop and cause.kind == "internal" and not roles.deciding and forced is None:
        prose = _loop_end(prose, site)
    platform = platform_of_method(site) if forced is None else None
    if platform is not None:
        prose = with_platform_method(prose, site, platform, launcher(site, knowledge))
    hardware = cause.kind == "hardware" and forced is None
    platforms = tensor_platforms(roles.deciding) if hardware else None
    rule = DEVICE_RULE
    if hardware and not platforms:
        # ``if not is_npu(): raise`` in code registered for NPU alone: every way in passes it.
        platforms, rule = gate_platforms(roles.deciding), PLATFORM_RULE
    if platforms:
        # The run may find that every way here already runs on that device: then a tensor on
        # another one failed the check (or the gate cannot fail), not the machine.
        internal = _enrich(site, knowledge, constants, reach, siblings, Cause("internal", (), rule))
        spec = device_spec(dataclasses.asdict(prose), dataclasses.asdict(internal), platforms)
        prose = dataclasses.replace(prose, device=spec)
    return dataclasses.replace(prose, solutions=[_members_said(s, ctx) for s in prose.solutions])


# ``so that `scheme in ACTIVATION_SCHEMES``: a fix that asks for a member of a named collection.
_MEMBER_OF_RE = re.compile(r"`[^`]*\bin ([A-Za-z_]\w*)`")
_MAX_MEMBERS = 8


def _members_said(solution: str, ctx: ReadContext) -> str:
    """``solution`` with the members of the collection it asks a value to be in, when that name
    is bound once to a literal one (the reader cannot see ``ACTIVATION_SCHEMES``; its values are
    what to pick from)."""
    m = _MEMBER_OF_RE.search(solution)
    if m is None:
        return solution
    members = bound_collection(ast.Name(id=m.group(1), ctx=ast.Load()), ctx)
    if not members or len(members) > _MAX_MEMBERS:
        return solution
    shown = ", ".join(f"`{v}`" for v in members)
    # Right after the test it names, ahead of whatever the sentence says next.
    return f"{solution[: m.end()]} (`{m.group(1)}` holds {shown}){solution[m.end() :]}"


def flag_of_keys(site: Site, cause: Cause, flags: Mapping[str, FlagInfo]) -> Cause:
    """An ``unknown-keys`` cause on a mapping read from an attribute a flag fills by its name
    (``extra = load_config.model_loader_extra_config``), as that flag's."""
    for b in site.guard.bindings:
        if b.name == cause.names[0] and isinstance(b.value, ast.Attribute):
            info = flags.get(b.value.attr)
            if info is not None and "_" in b.value.attr:
                return Cause(cause.kind, (info.flag,), cause.rule)
    return cause


def _pinned(view: AtomView) -> Reads:
    """The flags and variables a passed check constrains by itself, one conjunct each (``a or
    not b`` passing pins neither)."""
    out = Reads()
    whole = simplify(view.expr) if view.expr is not None else None
    if isinstance(whole, ast.BoolOp) and isinstance(whole.op, ast.Or):
        return out
    for c in view.constraints:
        if c.kind == "flag" and c.info is not None:
            out.add_flag(c.info)
        elif c.kind == "env":
            out.add_env(c.name)
    return out


def validation_code(site: Site, views: list[AtomView]) -> str:
    """The assignments that run on every path to the site, then the guard as one condition with
    its negations pushed in (``x is None``, ``'k' in d``, De Morgan)."""
    lines = [f"# reached in: {h}" for h in site.guard.handler_atoms]
    lines.extend(b.source for b in site.guard.bindings if b.always)
    lines.append(condition_code(views) or "True")
    return "\n".join(lines)


def _minimal(site: Site) -> Prose:
    where = site.qualname or "<module>"
    try:
        validation = site.guard.validation_code()
    except Exception:
        validation = "True"
    return Prose(
        errorType="runtime",
        severity="error",
        documentation=f"In `{where}` ({site.path}, line {site.line}) the code raises `{site.error_class}`.",
        triggerScenarios=f"Reaching line {site.line} of {site.path}.",
        commonSituations=f"Calls into {where} with inputs it does not accept.",
        solutions=[f"Avoid the inputs that make {where} raise {site.error_class}"],
        exampleFix=f"# before\n{where}(...)\n# after\n# call {where} only with accepted inputs",
        handlingStrategy="fail-fast",
        validationCode=validation,
        typeGuard=None,
        tryCatchPattern=None,
        preventionTips=[f"Cover {where} with a test for the failing inputs"],
        tags=[kebab(site.path.rsplit("/", 1)[-1].removesuffix(".py")) or "sglang"],
        backgroundTag="internal-invariant",
        errorCode=site.error_code,
    )
