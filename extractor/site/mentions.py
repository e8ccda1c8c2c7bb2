"""What a record says about flags, environment variables and its own scope, read from its fields.

The record format is fixed, so the catalogue reads these facts back from the prose the extractor
writes: the documentation names the flags and variables involved (``Command-line flags involved:
`--x` (help); ...``, ``Environment variables involved: `X`, ...``) and glosses each condition
(``(`--pp-size` differs from 1)``); the message itself may name a flag (``requires --x``); the
guard in ``validationCode`` may read a variable (``os.environ.get("X")``, ``envs.X.get()``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from extractor.records.model import ErrorRecord

__all__ = ["Constraint", "Mentions", "env_names_read", "read_mentions", "scope_of"]

# A flag as argparse spells it: two dashes, then lowercase words joined by dashes.
_FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*(?![\w-])")
_ENV_TOKEN_RE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_FLAGS_SENTENCE_RE = re.compile(r"Command-line flags involved: (.*?)\.(?= [A-Z]|$)")
_ENVS_SENTENCE_RE = re.compile(r"Environment variables involved: (.*?)\.(?= [A-Z]|$)")
_TICKED_RE = re.compile(r"`([^`]+)`")
# Sentences of the documentation that follow the one about the deciding condition.
_AFTER_CONDITION_RE = re.compile(
    r" (?:The error maps to|Command-line flags involved|Environment variables involved|"
    r"It is raised while handling|The code above the check says)"
)
# A gloss right after a name: "`--pp-size` differs from 1", "`X` is unset or false".
_GLOSS_RE = re.compile(
    r"`(?P<name>--[a-z0-9][a-z0-9_-]*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)` "
    r"(?P<gloss>(?:is|equals|differs|lies|has|holds|matches|contains|names|starts|ends|must)\b"
    r"[^;`)]*(?:`[^`]*`[^;`)]*)*)"
)
# Reads of an environment variable in code: getenv("X"), environ["X"], get_bool_env_var("X"), envs.X.
_ENV_READ_RE = re.compile(
    r"""(?:getenv|environ\.get|environ\[|\w*env_var\w*|get_env\w*)\(?\s*['"](?P<a>[A-Z][A-Z0-9_]+)['"]"""
    r"""|\benvs\.(?P<b>[A-Z][A-Z0-9_]+)\b"""
)
_SCOPE_RE = re.compile(
    r"^In the (?P<kind>(?:async )?(?:nested )?(?:function|method|class body of)) `(?P<name>[^`]+)`"
)


@dataclass(frozen=True)
class Constraint:
    """What one record's check says about one flag or variable: the gloss, or that it reads it."""

    name: str
    words: str


@dataclass(frozen=True)
class Mentions:
    """The flags and environment variables one record names, in order of first mention."""

    flags: tuple[str, ...]
    envs: tuple[str, ...]
    flag_help: dict[str, str]
    constraints: tuple[Constraint, ...]

    def constraints_on(self, name: str) -> list[str]:
        return [c.words for c in self.constraints if c.name == name]

    def others(self, name: str) -> list[str]:
        """The other flags and variables the same record names: what ``name`` combines with."""
        return [n for n in (*self.flags, *self.envs) if n != name]


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def env_names_read(record: ErrorRecord) -> list[str]:
    """The variables the documentation lists as involved and those the guard reads in code."""
    names: list[str] = []
    found = _ENVS_SENTENCE_RE.search(record.documentation)
    if found:
        names += [n for n in _TICKED_RE.findall(found.group(1)) if _ENV_TOKEN_RE.fullmatch(n)]
    names += [m.group("a") or m.group("b") for m in _ENV_READ_RE.finditer(record.validationCode)]
    return names


def _split_flag_sentence(text: str) -> list[tuple[str, str]]:
    """``\\`--x\\` (help); \\`--y\\``` -> [(--x, help), (--y, "")], splitting at top-level ``; ``."""
    out: list[tuple[str, str]] = []
    for part in re.split(r";\s(?=`--)", text):
        found = re.match(r"`(--[^`]+)`(?:\s\((.*)\))?\s*$", part.strip(), re.DOTALL)
        if found:
            out.append((found.group(1), (found.group(2) or "").strip()))
    return out


def read_mentions(record: ErrorRecord, known_envs: frozenset[str]) -> Mentions:
    """Flags and variables ``record`` names, with the constraint its check puts on each.

    ``known_envs`` are the variables any record of the dataset reads (:func:`env_names_read`):
    an upper-case word in a message is a variable only if the dataset knows it as one.
    """
    doc = record.documentation
    flags: list[str] = []
    helps: dict[str, str] = {}
    found = _FLAGS_SENTENCE_RE.search(doc)
    if found:
        for flag, help_text in _split_flag_sentence(found.group(1)):
            if _FLAG_RE.fullmatch(flag):
                flags.append(flag)
                if help_text:
                    helps[flag] = help_text
    flags += _FLAG_RE.findall(record.errorMessage)
    envs = env_names_read(record)
    envs += [t for t in _ENV_TOKEN_RE.findall(record.errorMessage) if t in known_envs]
    flag_set, env_set = set(flags), set(envs)

    condition = _AFTER_CONDITION_RE.split(doc, maxsplit=1)[0]
    constraints: list[Constraint] = []
    for m in _GLOSS_RE.finditer(condition):
        name = m.group("name")
        if name in flag_set or name in env_set:
            constraints.append(Constraint(name, f"fires when {name} {m.group('gloss').strip()}"))
    glossed = {c.name for c in constraints}
    for name in _unique([*flags, *envs]):
        if name in glossed:
            continue
        if f"`{name}`" in condition or name in record.validationCode:
            constraints.append(Constraint(name, "read by the check that decides"))
        elif name in record.errorMessage:
            constraints.append(Constraint(name, "named in the message"))
        else:
            constraints.append(Constraint(name, "selects the path to this check"))
    return Mentions(
        flags=_unique(flags),
        envs=_unique(envs),
        flag_help=helps,
        constraints=tuple(dict.fromkeys(constraints)),
    )


def scope_of(record: ErrorRecord) -> str:
    """The function, method or class the site is in (``Indexer.forward``), or ``<module>``."""
    found = _SCOPE_RE.match(record.documentation)
    return found.group("name") if found else "<module>"
