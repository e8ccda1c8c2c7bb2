"""Records of raises that never reach the user as such: what they see instead.

A raise its own function catches (:mod:`extractor.analysis.handling`), or that every caller
catches (:mod:`extractor.reach.handled`), and turns into a log line, a fallback value, another
exception or an exit is described that way: the documentation says who catches it and what the
handler does, ``triggerScenarios`` what the user meets instead (the logged text, the other class),
``handlingStrategy`` and ``severity`` follow, and no ``tryCatchPattern`` is offered: catching an
error that has already been handled is advice that never fires.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from extractor.analysis.facts import Site
from extractor.analysis.handled_facts import Outcome, escape_plain

__all__ = ["Catcher", "handled_by_own_function", "with_handling"]

_MAX_TAGS = 10
_MAX_VALUE = 80
_MAX_CALLERS = 3
_LEVEL_SEVERITY = {"debug": "info", "info": "info", "print": "info", "warning": "warning", "error": "error"}


@dataclass(frozen=True)
class Catcher:
    """One function that catches the raise: its scope, file, clause and what the handler does."""

    scope: str
    path: str
    clause: str
    outcome: Outcome


def _code(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _MAX_VALUE:
        text = text[: _MAX_VALUE - 1] + "…"
    return f"`{text}`"


def _then_words(then: str, carries: bool = False) -> str:
    if then.startswith("return"):
        value = then.removeprefix("return").strip()
        return f"returns {_code(value)}" if value else "returns"
    if carries:
        return f"keeps it ({_code(then)}) and goes on"
    if then == "continue":
        return "goes on with the next iteration of its loop"
    if then == "break":
        return "leaves its loop"
    if then:
        return f"goes on with its fallback ({_code(then)})"
    return "goes on after the `try`"


def _level_words(level: str) -> str:
    return "prints" if level == "print" else f"logs at {level} level"


def does(outcome: Outcome) -> str:
    """What the handler does, as a verb phrase (``logs at warning level "..." and returns `None```)."""
    if outcome.kind == "convert":
        return f"raises `{outcome.raised}` in its place"
    if outcome.kind == "exit":
        ends = f"ends the process ({_code(outcome.then)})"
        return f'{_level_words(outcome.level)} "{outcome.logged}", then {ends}' if outcome.logged else ends
    then = _then_words(outcome.then, outcome.carries)
    if outcome.passed and " ".join(outcome.passed.split()) == " ".join(outcome.then.split()):
        then = "goes on after the `try`"  # the statement that keeps the error is said once, below
    if outcome.passed:
        verb = "keeps it in" if " = " in outcome.passed else "hands it to"
        then = f"{verb} {_code(outcome.passed)}" + (
            "" if then.startswith("goes on after") else f", then {then}"
        )
    if (outcome.carries or outcome.passed) and not outcome.logged:
        return then
    if outcome.logged:
        return f'{_level_words(outcome.level)} "{outcome.logged}", then {then}'
    if outcome.level:
        return f"{_level_words(outcome.level)} the traceback, then {then}"
    return f"{then}, with no message"


_REPORT_WITH = "Report it to sglang as a bug with the full message and traceback, "
_REPORT_SILENT = (
    "If what the fallback gives you is wrong (it prints nothing), report it to sglang as a bug with "
)


def _silent(outcome: Outcome) -> bool:
    """Whether the fallback shows nothing at all: no log line, no printed traceback, no message kept."""
    return outcome.kind == "swallow" and not (
        outcome.logged or outcome.level or outcome.passed or outcome.carries
    )


def sees(outcome: Outcome) -> str:
    """What reaches the user instead of the error."""
    if outcome.kind == "convert":
        if outcome.logged:
            return f'a `{outcome.raised}` raised from it: "{outcome.logged}"'
        return f"a `{outcome.raised}` raised from it"
    if outcome.kind == "exit":
        return (
            f'"{outcome.logged}" in the log, then the process ending'
            if outcome.logged
            else "the process ending"
        )
    if outcome.carries and outcome.then.startswith("return"):
        value = outcome.then.removeprefix("return").strip()
        return f"its message handed back as a result or response ({_code(value)}), not as an exception"
    if outcome.passed and not outcome.logged:
        later = (
            ", which may raise it later or name it as the cause of another error"
            if _keeps_error(outcome)
            else ""
        )
        return f"no exception here: the error is kept ({_code(outcome.passed)}) for the code that reports it{later}"
    later = _later(outcome)
    if outcome.logged:
        article = "an" if outcome.level[:1] in "aeiou" else "a"
        where = "printed" if outcome.level == "print" else f"{article} {outcome.level} line in the log"
        kept = (
            f", and its text kept ({_code(outcome.passed)}) for the code that reports it"
            if outcome.passed and not later
            else ""
        )
        return f'"{outcome.logged}" ({where}){kept}{later and f"; then {later}"}'
    if later:
        return later
    if outcome.level:
        return "a printed traceback"
    return "no error at all: the code takes its fallback silently"


def _later(outcome: Outcome) -> str:
    """The raise further down that carries the kept error (``raise RuntimeError(f"... {last}")``
    once every try failed), as what the user meets: empty when there is none."""
    report = outcome.report
    if report is None:
        return ""
    line, cls, message = report
    said = f' "{message}"' if message else ""
    return (
        f"when no later try gets past it, line {line} raises `{cls}`{said}, "
        f"which carries this error's text ({_code(outcome.passed)})"
    )


_KEEPERS = frozenset({"append", "add", "put", "put_nowait", "set_exception", "extend", "insert"})


def _keeps_error(outcome: Outcome) -> bool:
    """Whether the handler keeps the caught error itself (``errors.append(e)``, ``last = e``), not
    text made from it (``reason = f"... {e}"``)."""
    if not (outcome.passed and outcome.bound):
        return False
    try:
        stmt = ast.parse(outcome.passed).body[0]
    except (SyntaxError, IndexError, ValueError):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        # Put in a collection or a future someone reads later; a function handed the error (to
        # log it, to turn a feature off) is no keeper.
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in _KEEPERS
            and any(isinstance(a, ast.Name) and a.id == outcome.bound for a in stmt.value.args)
        )
    return (
        isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == outcome.bound
    )


def _hands_on(outcome: Outcome) -> bool:
    """Whether the handler keeps the error for later or returns it (not only logs it)."""
    return bool(outcome.passed) or (outcome.carries and outcome.then.startswith("return"))


def _strategy(outcomes: Sequence[Outcome]) -> str:
    kinds = {o.kind for o in outcomes}
    if kinds == {"swallow"}:
        return "propagate" if any(_hands_on(o) for o in outcomes) else "fallback"
    if "exit" in kinds:
        return "fail-fast"
    return "propagate"


def _severity(outcomes: Sequence[Outcome], current: str) -> str:
    if any(o.kind != "swallow" for o in outcomes):
        return current
    order = ["info", "warning", "error", "critical"]
    worst = max((_LEVEL_SEVERITY.get(o.level, "info") for o in outcomes), key=order.index)
    return worst if order.index(worst) < order.index(current) else current


def with_handling(
    fields: Mapping[str, Any], catchers: Sequence[Catcher], own: bool, callee: str = ""
) -> dict[str, Any]:
    """``fields`` (a record's prose fields) for a raise handled by ``catchers``: its own function
    (``own``) or every caller of ``callee`` (its qualname)."""
    out = dict(fields)
    if not catchers:
        return out
    outcomes = [c.outcome for c in catchers]
    # A kept error a later raise carries (after a retry loop) reaches the user after all.
    reported = next((later for o in outcomes if (later := _later(o))), "")
    swallowed = all(o.kind == "swallow" for o in outcomes) and not reported
    first = catchers[0]
    if own:
        where = f"`{first.scope}` catches it itself (`{first.clause}`, line {first.outcome.line}) and {does(first.outcome)}"
        lead = "It does not leave its function" if swallowed else "It does not leave its function as it is"
    else:
        parts = [f"`{c.scope}` ({c.path}, `{c.clause}`) {does(c.outcome)}" for c in catchers[:_MAX_CALLERS]]
        more = len(catchers) - _MAX_CALLERS
        where = (
            "every known caller catches it: " + "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
        )
        name = callee.rpartition(".")[2]
        if name and not name.startswith("_"):
            # A public function may also be called by code outside the analysed tree (a plugin).
            where += f" (code outside this tree that calls `{name}` itself still meets the error)"
        lead = "It does not reach the user" if swallowed else "It does not reach the user as it is"
        if swallowed and any(_keeps_error(o) for o in outcomes):
            # Kept for later (``errors.append(e)``): the code that collects it may raise it again,
            # or raise another error from it.
            lead = "It does not reach the user from here"
        elif swallowed and any(_hands_on(o) for o in outcomes):
            # The text goes on in a value (a failure reason, a response): the user may well read it.
            lead = "It does not reach the user as an exception"
    out["documentation"] = f"{fields['documentation']} {lead}: {where}."
    seen = list(dict.fromkeys(sees(o) for o in outcomes))
    out["triggerScenarios"] = f"{fields['triggerScenarios']} What you see instead: {'; or '.join(seen)}."
    if reported:
        advice = f"You meet this error inside another: {reported}; the steps here remove its cause"
    elif swallowed:
        advice = (
            f"No try/except is needed: the error is already handled where it is raised and you see "
            f"{seen[0]}; the other steps here remove its cause"
        )
    else:
        advice = f"You meet this error as {seen[0]}: the steps here remove its cause"
    rest = [s for s in fields["solutions"] if s != advice]
    if swallowed and all(_silent(o) for o in outcomes):
        # Nothing is printed: there is no message or traceback to send, only what the fallback did.
        rest = [s.replace(_REPORT_WITH, _REPORT_SILENT) for s in rest]
    out["solutions"] = [advice, *rest]
    out["tryCatchPattern"] = None
    out["handlingStrategy"] = _strategy(outcomes)
    out["severity"] = str(fields["severity"]) if reported else _severity(outcomes, str(fields["severity"]))
    tag = "swallowed" if swallowed else "re-raised-as-other"
    tags = list(fields["tags"])
    if tag not in tags and len(tags) < _MAX_TAGS:
        tags.append(tag)
    out["tags"] = tags
    return out


def handled_by_own_function(fields: dict[str, Any], site: Site) -> dict[str, Any]:
    """A worker's record of ``site`` as its own function's handling makes it; a raise that leaves
    the function is marked for :mod:`extractor.reach.handled` instead."""
    handled = site.handled
    if handled is None:
        return fields
    if handled.caught is not None:
        caught = handled.caught
        return with_handling(
            fields, [Catcher(caught.scope, site.path, caught.clause, caught.outcome)], own=True
        )
    if handled.escapes is not None:
        return {**fields, "_escapes": escape_plain(handled.key, handled.escapes)}
    return fields
