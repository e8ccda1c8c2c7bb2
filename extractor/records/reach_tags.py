"""How a user's choice that reaches a site is spelled among a record's ``tags``.

:mod:`extractor.prose.reach` writes a site's reach into its tags (a flag's values, a valueless
flag's name, a model architecture's family) and ``match`` reads a log's choices back against them
(:mod:`extractor.datasets.match.choices`): both spell a choice with these functions, so the two
sides agree by construction.
"""

from __future__ import annotations

import re

__all__ = ["ARCH_SUFFIX", "arch_tag", "kebab"]

ARCH_SUFFIX = re.compile(
    r"(?:For(?:CausalLM|ConditionalGeneration|SequenceClassification)\w*|Model|Pipeline)$"
)
"""The part of an architecture's class name that says what head it has, not which model it is."""


def kebab(text: str) -> str:
    """``cutlass_mla`` -> ``cutlass-mla``, ``--enable-lora`` -> ``enable-lora``, ``QwenVL`` -> ``qwen-vl``."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def arch_tag(name: str) -> str:
    """An architecture's family: ``DeepseekV3ForCausalLM`` -> ``deepseek-v3``."""
    return kebab(ARCH_SUFFIX.sub("", name) or name)
