"""Tags, typeGuard and tryCatchPattern."""

from __future__ import annotations

import ast
import re

from extractor.analysis.facts import Site
from extractor.prose.classify import Kind
from extractor.prose.commands import VALIDATOR_WRAPPED, call_of
from extractor.prose.constraints import AtomView
from extractor.prose.reads import Reads
from extractor.prose.wording import kebab, short_path
from extractor.records.message_pattern import WILDCARD

# Feature words, matched as substrings of the site's text with every run of non-alphanumerics
# turned into one space (so ``mm_`` reads `` mm `` and a leading/trailing space marks a word
# boundary). Plain substring tests: one regex alternation over all of them cost a millisecond a
# site.
_FEATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("speculative-decoding", ("specul", "eagle", "dflash", "dspark", "draft", " mtp ", "ngram", "lookahead")),
    ("lora", ("lora",)),
    (
        "quantization",
        ("quant", "fp8", "fp4", "int8", "int4", " awq", "gptq", "mxfp", "w8a8", " w4a", "marlin", "gguf"),
    ),
    ("multimodal", ("multimodal", " mm ", "vision", "image", "video", "audio", " vit", "processor")),
    ("disaggregation", ("disagg", "prefill only", "decode only", "kv transfer", "mooncake", "nixl")),
    ("moe", (" moe", "moe ", "expert", " ep ", "deepep", "eplb")),
    ("attention", ("attention", "attn", "flashinfer", " mla ")),
    (
        "distributed",
        (
            "tp size",
            "pp size",
            "dp size",
            "tensor parallel",
            "pipeline parallel",
            "nccl",
            "distributed",
            "world size",
            "all reduce",
            "allreduce",
        ),
    ),
    ("cuda-graph", ("cuda graph", "cudagraph", "graph runner", "npugraph")),
    ("kv-cache", ("kv cache", "kvcache", "token to kv", "req to token", "radix", "hicache", "mem cache")),
    ("tokenizer", ("tokeniz",)),
    ("diffusion", ("multimodal gen", "diffusion", "denois", " dit ", " vae")),
    ("structured-output", ("grammar", "outlines", "json schema", " regex")),
    ("openai-api", ("openai", "chat template", "serving ")),
    ("npu", (" npu", "npu ", "ascend")),
    ("rocm", (" hip ", " hip", "rocm", "aiter")),
    ("mamba", ("mamba", " ssm", "ssm ", "linear attn", " kda", " gdn")),
)
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


INTERNAL_TAG = "internal-invariant"
"""The background tag of a check the code calls its own invariant."""


def retagged(tags: object, before: object, after: str) -> list[str] | None:
    """``tags`` with a record's background tag ``before`` replaced by the one it was given
    instead; None when there are no tags to change."""
    if not isinstance(tags, list):
        return None
    return list(dict.fromkeys(after if t == before else t for t in tags))


def _features(text: str) -> list[str]:
    words = " " + _NON_ALNUM_RE.sub(" ", text.lower()) + " "
    return [name for name, keys in _FEATURES if any(k in words for k in keys)]


def site_tags(site: Site, views: list[AtomView], total: Reads, kind: Kind) -> list[str]:
    """The subsystem and class, the flags and variables ``total`` holds (those involved), the
    features the tests ``views`` name (the deciding ones and the gates: a check that passed
    elsewhere in the function is another code path's), and the background."""
    tags: list[str] = []
    rel = short_path(site.path)
    parts = rel.split("/")[:-1]
    if parts:
        top = parts[0]
        if top == "srt" and len(parts) > 1:
            tags.append(kebab(parts[1]))
        else:
            tags.append(kebab(top))
            if len(parts) > 1 and top != "srt":
                tags.append(kebab(parts[1]))
    else:
        tags.append(kebab(rel.rsplit(".", 1)[0]) or "sglang")
    if site.in_class:
        tags.append(kebab(site.in_class.split(".")[-1]))
    tags.extend(f.flag.lstrip("-") for f in total.flags[:4])
    tags.extend(kebab(e) for e in total.envs[:2])
    hay = " ".join(
        [site.path, site.qualname, site.message.template if site.message else "", *(v.text for v in views)]
    )
    tags.extend(_features(hay))
    tags.append(kind.background)
    return [t for t in dict.fromkeys(tags) if t][:12]


def type_guard(views: list[AtomView]) -> str | None:
    code = _type_guard_code(views)
    if code is None:
        return None
    try:
        ast.parse(code)
    except SyntaxError:
        # e.g. ``isinstance(x, (A, *more))``: no type expression to name.
        return None
    return code


def _type_guard_code(views: list[AtomView]) -> str | None:
    for v in views:
        if v.isinstance_ is None:
            continue
        subj, types, positive = v.isinstance_
        param = re.sub(r"\W+", "_", subj).strip("_") or "value"
        if param[0].isdigit():
            param = "v_" + param
        t = " | ".join(types)
        if not positive:
            # The site runs when the value is *not* one of the types: the guard that avoids it
            # narrows to them.
            return (
                "from typing import TypeGuard\n\n"
                f"def is_valid_{param}({param}: object) -> TypeGuard[{t}]:\n"
                f"    return isinstance({param}, {_isinstance_arg(types)})"
            )
        return (
            f"def is_valid_{param}({param}: object) -> bool:\n"
            f"    # {subj} must not be {' or '.join(types)} here\n"
            f"    return not isinstance({param}, {_isinstance_arg(types)})"
        )
    return None


def _isinstance_arg(types: list[str]) -> str:
    return types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"


def _pattern(site: Site) -> str:
    """The site's message pattern, or one that matches any text when it has none."""
    return site.message.pattern if site.message is not None and site.message.pattern else WILDCARD


def try_catch_pattern(site: Site) -> str:
    if site.kind == "response":
        # A returned error response reaches the client as an HTTP error body, not an exception.
        pattern = _pattern(site)
        return "\n".join(
            [
                "import re\n",
                "resp = client.post(url, json=request)",
                f"err = resp.json().get('error', resp.json()) if resp.status_code == {site.http_status or 400} else None",
                f"if err and err.get('type') == {site.error_class!r} and re.fullmatch({pattern!r}, err.get('message', '')):",
                "    ...  # this check fired: apply one of the solutions",
            ]
        )
    cls = site.error_class
    short = cls.rsplit(".", 1)[-1]
    call = call_of(site)
    if site.validates is not None and short in VALIDATOR_WRAPPED:
        # Pydantic hands a validator's ValueError or AssertionError on inside a ValidationError,
        # one entry per failure: "Value error, <message>" ("Assertion failed, <message>").
        pattern = _pattern(site)
        return "\n".join(
            [
                "import re\n",
                "from pydantic import ValidationError\n",
                f"try:\n    {call}\nexcept ValidationError as e:",
                f"    if any(re.fullmatch({pattern!r}, err['msg'].partition(', ')[2]) for err in e.errors()):",
                "        ...  # this check fired: apply one of the solutions",
                "    else:\n        raise",
            ]
        )
    lines = []
    if site.message is not None and site.message.pattern:
        lines.append("import re\n")
        lines.append(f"try:\n    {call}\nexcept {short} as e:")
        lines.append(f"    if re.fullmatch({site.message.pattern!r}, str(e)):")
        lines.append("        ...  # this check fired: apply one of the solutions")
        lines.append("    else:\n        raise")
    else:
        lines.append(f"try:\n    {call}\nexcept {short}:")
        lines.append(
            f"    ...  # raised by {site.qualname if site.qualname != '<module>' else site.path} without a message"
        )
    return "\n".join(lines)
