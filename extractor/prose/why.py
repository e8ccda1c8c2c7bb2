"""The why of a check in the code's own words, and the situations in which a user meets it.

The reason a check exists is read from the site, in this order: the comment above the check,
the docstring of its function, the docstring of its class, and the message when its literal text
explains more than it names. No sentence is chosen by tag: a site whose code says nothing gets
no why, only what it tests and where.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import Site, and_join
from extractor.prose.cause import CAPABILITY, Cause, Roles, asked_flag, is_limit, message_text, missing_keys
from extractor.prose.constraints import AtomView, fails_on_hardware, simplify
from extractor.reach.forced import ARCH_NAME

__all__ = ["code_words", "doc_sentences", "reason_comments", "scope_name", "situations"]

_MAX_WORDS = 300
_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def _clip(text: str, limit: int = _MAX_WORDS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


# A section banner (``--- capture ----``, ``===== TO BE REFACTORED ====``) heads a stretch of
# code; it is no reason for the check below it.
_BANNER_RE = re.compile(r"^\s*[-=#*~_+]{3,}|[-=#*~_+]{3,}\s*$")


def reason_comments(site: Site) -> list[str]:
    """The comment lines above the check that may say why it is there: banners left out."""
    return [c for c in site.comments if c.strip() and not _BANNER_RE.search(c)]


def _comment(site: Site) -> str:
    return _clip(" ".join(reason_comments(site)))


def scope_name(site: Site) -> str:
    """The function or method a site is in, or its file for module-level code."""
    return site.qualname if site.qualname not in ("", "<module>") else site.path


def _explaining_message(site: Site) -> str:
    """The message's literal text when it has words of its own (``"head_dim must be a power of
    2"`` has; ``"{x} != {y}"`` and ``"TODO"`` have not)."""
    if site.message is None:
        return ""
    literal = " ".join("".join(p if isinstance(p, str) else " " for p in site.message.parts).split())
    if len(_WORD_RE.findall(literal)) < 2:
        return ""
    return _clip(site.message.template)


def code_words(site: Site) -> str:
    """One sentence of the code's own reason for the check, or ``""`` when the code gives none."""
    comment = _comment(site)
    if comment:
        return f'The code gives the reason above the check: "{comment}"'
    if site.doc:
        return f'`{scope_name(site)}` is documented as: "{_clip(site.doc)}"'
    if site.class_doc and site.in_class:
        return f'`{site.in_class}` is documented as: "{_clip(site.class_doc)}"'
    msg = _explaining_message(site)
    if msg:
        return f'The message says: "{msg}"'
    return ""


def doc_sentences(site: Site) -> list[str]:
    """For the documentation: the function's and the class's docstrings (the comment above the
    check is stated there already)."""
    out = []
    if site.doc:
        out.append(f'`{scope_name(site)}` is documented as: "{_clip(site.doc)}"')
    if site.class_doc and site.in_class:
        out.append(f'Its class `{site.in_class}` is documented as: "{_clip(site.class_doc)}"')
    return out


def _names(cause: Cause, n: int = 4) -> str:
    return ", ".join(f"`{x}`" for x in cause.names[:n])


def _gate_context(gates: Sequence[AtomView]) -> str:
    plain = [v.simple for v in gates if v.expr is not None and v.atom.kind != "except"]
    return f" on the path where `{and_join(plain[:3])}`" if plain else ""


def _left_out(roles: Roles) -> str:
    """The flags every deciding test requires to be given (``not args.x``, ``args.x is None``)."""
    cs = [c for v in roles.deciding for c in v.constraints]
    # Each conjunct of each test is one of them: ``not a and (not b or not c)`` leaves more open.
    parts = sum(len(split_and(simplify(v.expr))) for v in roles.deciding if v.expr is not None)
    if not cs or len(cs) != parts:
        return ""
    if not all(
        ((c.kind == "flag" and c.op in ("falsy", "is-none")) or (c.kind == "env" and c.op == "is-none"))
        and not c.values
        for c in cs
    ):
        return ""
    return " and ".join(f"`{n}`" for n in dict.fromkeys(c.name for c in cs))


def situations(site: Site, roles: Roles, cause: Cause, cond: str) -> str:
    """``commonSituations``: who meets the check and with what, for this site, then the code's
    own reason when it gives one."""
    where = f"`{scope_name(site)}`"
    ctx = _gate_context(roles.gates)
    test = f"`{cond}`" if cond else "the check"
    kind = cause.kind
    missing = _left_out(roles)
    if (
        not missing
        and cause.rule == "message-flag"
        and (asked := asked_flag(message_text(site), cause.names, roles))
    ):
        missing = f"`{asked}`"
    if kind in ("flag", "env") and missing:
        # ``not server_args.enable_lora``: no value is set to meet it, the flag is not given.
        lead = f"A launch command or deployment script that leaves out {missing}, which {where} needs{ctx}."
    elif kind in ("flag", "env"):
        lead = f"A launch command or deployment script that sets {_names(cause)} so that {test} holds in {where}{ctx}."
    elif kind == "model" and cause.rule == "no-weights":
        lead = "A `--model-path` that points at the wrong folder or repo, or a download that stopped before the weight files."
    elif kind == "model":
        # Only config keys fill the slot: not "checkpoint", nor an architecture the message names.
        keys = [n for n in cause.names if n not in ("checkpoint", "config.json") and not ARCH_NAME.match(n)]
        given = ", ".join(f"`{k}`" for k in keys[:3])
        absent = missing_keys(roles)
        lead = (
            f"Loading a checkpoint whose config.json leaves out {' and '.join(f'`{k}`' for k in absent)}, "
            f"which {where} needs{ctx}."
            if absent
            else f"Loading a checkpoint whose config gives {given} a value {where} does not handle ({test}){ctx}."
            if keys
            else f"Loading a checkpoint {where} does not handle ({test}){ctx}."
        )
    elif kind == "hardware" and cause.rule == "driver-error":
        lead = (
            f"A machine whose GPU driver and {cause.names[0]} library disagree, or whose GPU is lost or "
            f"does not support what {where} asks of it."
        )
    elif kind == "hardware" and cause.names == (CAPABILITY,):
        lead = f"Running {where} on a GPU older than the compute capability it checks for{ctx}."
    elif kind == "hardware" and fails_on_hardware(roles.deciding):
        lead = f"Running {where} on {', '.join(cause.names)}{ctx}."
    elif kind == "hardware":
        lead = f"Running {where} on a device without {', '.join(cause.names)}{ctx}."
    elif kind == "dependency":
        pk = ", ".join(cause.names) or "the package it imports"
        lead = f"An environment where {pk} is missing or at a version {where} does not accept."
    elif kind == "input" and cause.rule == "parsed-config":
        lead = f"A config or data file (or JSON text) given to {where} with a wrong {_names(cause, 1)} entry ({test}){ctx}."
    elif kind == "input" and cause.rule == "format":
        lead = f"A value handed to {where} that is not in the form its message states ({test}){ctx}."
    elif kind == "input" and cause.rule == "adapter-limit":
        lead = f"Loading a LoRA adapter of a kind {where} does not support ({test}){ctx}."
    elif kind == "input" and cause.rule == "request-object":
        sender = "Data handed to" if site.validates is not None else "A client sending a request to"
        lead = f"{sender} `{site.in_class}` with {_names(cause, 3)} for which {test} holds in {where}{ctx}."
    elif kind == "input":
        lead = f"A caller of {where} passing {_names(cause, 3)} for which {test} holds{ctx}."
    elif kind == "resource":
        lead = f"Load or sizes beyond what {where} was given ({', '.join(cause.names)}){ctx}."
    elif kind == "passed-on":
        lead = (
            f"{where} failing inside its `try` block and handing the error on as `{site.error_class}`{ctx}: "
            "the error underneath, not this check, is the one to fix."
        )
    elif site.guard.handlers:
        lead = f"{where} catching {', '.join(f'`{h}`' for h in site.guard.handlers[:2])} and raising this instead{ctx}."
    elif is_limit(site):
        lead = (
            f"A call of {where} with a case it does not support, as its message says ({test}){ctx}."
            if cond
            else f"Any call of {where}: it does not support the case, as its message says."
        )
    else:
        lead = f"{where} reached with {test}{ctx}, a state its callers are expected never to produce."
    why = code_words(site)
    return f"{lead} {why}" if why else lead
