"""The user's choices a log names (model architecture, backends and flag values), as record tags.

A server log prints its launch arguments (``server_args=ServerArgs(attention_backend='fa3',
...)``, a ``--attention-backend fa3`` command line, a JSON dump of them) and the model's
architecture (``architectures=['DeepseekV3ForCausalLM']``, the class named in a message). The
records carry the choices that reach a site among their tags, spelled by
:mod:`extractor.records.reach_tags`; :func:`named_choices` spells what the log names the same way,
so a record reached by one of them can be favoured among sites the rest of the evidence cannot
tell apart (:data:`CHOICE_POINTS` in :mod:`extractor.datasets.match.ranking`).

Only values a choice can take count: quoted strings and switches turned on (``=True``, a bare
``--enable-lora``); numbers, ``None`` and switches left off name nothing.
"""

from __future__ import annotations

import re

from extractor.records.reach_tags import arch_tag, kebab

__all__ = ["HEAD_CHARS", "TAIL_CHARS", "named_choices"]

HEAD_CHARS = 1_000_000
TAIL_CHARS = 250_000
"""A long log is read for its choices at its start (the launch arguments, the model config) and
its end (where a pasted report adds its command line)."""

_VALUE = r"[A-Za-z][\w.+-]{0,63}"
# Each expression starts with a literal, so a long log is scanned quickly; the name before a
# keyword's ``=`` is read backwards from it.
# ``name='value'`` (a dataclass repr, a Namespace), ``name=True``, and JSON's ``"name": "value"``.
_KEYWORD = re.compile(rf"""=[ \t]*(?:(['"])({_VALUE})\1|(True)\b)""")
_JSON_KEYWORD = re.compile(rf""""([a-z][a-z0-9_]{{1,63}})"[ \t]*:[ \t]*(?:"({_VALUE})"|(true)\b)""")
_NAME_BEFORE = re.compile(r"(?<!\w)([a-z][a-z0-9_]{1,63})[ \t]*$")
# ``--attention-backend fa3``, ``--attention-backend=fa3``, a bare ``--enable-lora`` (the line
# ends or another option follows it; ``--tp 8`` names no choice).
_OPTION = re.compile(r"--([a-z][a-z0-9-]{1,63})(?:[= ][ \t]*(?!-)(\S+)|(?=[ \t]*$|[ \t]+--))", re.M)
_VALUE_RE = re.compile(_VALUE)
_ARCH_HEAD = re.compile(r"For(?:CausalLM|ConditionalGeneration|SequenceClassification)\w*")
_ARCH_START = re.compile(r"\b[A-Z][A-Za-z0-9_]{0,80}$")
# ``architectures=['X']``, and a config.json dump, where the list may span lines.
_ARCH_LIST = re.compile(r"""architectures['"]?\s*[=:]\s*\[([^\]]{0,400})\]""")
_QUOTED_NAME = re.compile(r"""['"]([A-Za-z_]\w{1,80})['"]""")
_OFF = frozenset({"none", "false"})


def _value(text: str) -> str:
    return "" if text.lower() in _OFF else kebab(text)


def named_choices(text: str) -> frozenset[str]:
    """The tags of the choices ``text`` names: ``fa3``, ``enable-lora``, ``deepseek-v3``, ..."""
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    out: set[str] = set()
    for m in _KEYWORD.finditer(text):
        name = _NAME_BEFORE.search(text, max(0, m.start() - 80), m.start())
        if name is not None:
            out.add(kebab(name[1]) if m[3] else _value(m[2]))
    for m in _JSON_KEYWORD.finditer(text):
        out.add(kebab(m[1]) if m[3] else _value(m[2]))
    for m in _OPTION.finditer(text):
        if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
            continue  # inside a word (``a--b``) or a longer run of dashes
        if m[2] is None:
            out.add(kebab(m[1]))
        elif _VALUE_RE.fullmatch(m[2].strip("'\"")):
            out.add(_value(m[2].strip("'\"")))
    for m in _ARCH_HEAD.finditer(text):
        head = _ARCH_START.search(text, max(0, m.start() - 80), m.start())
        if head is not None:
            out.add(arch_tag(head[0] + m[0]))
    for m in _ARCH_LIST.finditer(text):
        out.update(arch_tag(name) for name in _QUOTED_NAME.findall(m[1]))
    out.discard("")
    return frozenset(out)
