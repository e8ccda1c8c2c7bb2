"""Classification of a site: errorType, backgroundTag, severity, handlingStrategy."""

from __future__ import annotations

import re
from dataclasses import dataclass

from extractor.analysis.facts import Site
from extractor.prose.constraints import AtomView
from extractor.prose.reads import Reads

_DEP_RE = re.compile(
    r"pip install|not installed|is required but|please install|install (it|the)|no module named|"
    r"requires? (the )?[\w.-]+ (package|library)|failed to import|cannot import|import error|"
    r"version of [\w.-]+ (is|must)|>= ?\d+\.\d+",
    re.I,
)
# Phrases that say the device is the problem; a bare "cuda" in "cuda-graph mode" does not.
_HW_MSG_RE = re.compile(
    r"\b((not |un)supported (on|by|for) (this |the |your )?(gpu|device|platform|hardware|arch)|"
    r"requires? (an? )?(nvidia |amd )?(gpu|cuda|rocm|hip|npu|xpu|sm ?\d{2,3}|hopper|blackwell|ampere)|"
    r"only (supported|available|works) on|compute capability|\bsm ?\d{2,3}\b|"
    r"(hopper|blackwell|ampere|ada)( gpus?| or newer| architecture)|device does not support|"
    r"unsupported (gpu|device|platform|hardware)|no (cuda|gpu|npu) (device|available))",
    re.I,
)
_RESOURCE_RE = re.compile(
    r"out of memory|\boom\b|not enough (memory|space|blocks|slots|tokens|pages)|insufficient|exceed|"
    r"too (large|many|long)|capacity|no (free|available) |exhausted|memory pool|run out",
    re.I,
)
_TIMEOUT_RE = re.compile(r"time(d)? ?out|deadline|did not (respond|finish|start) within", re.I)
_NET_RE = re.compile(
    r"connect|socket|\bport\b|\bhttp\b|\burl\b|unreachable|network|\bzmq\b|rpc|handshake", re.I
)
_IO_RE = re.compile(
    r"\bfile\b|director(y|ies)|\bpath\b|not found on disk|no such|cannot (open|read|write)|\.json|\.yaml|safetensors",
    re.I,
)
_CONFLICT_RE = re.compile(
    r"not (supported|compatible) (with|when|together)|cannot be (used|combined|enabled) (with|together)|"
    r"incompatible|mutually exclusive|only one of|conflicts? with|together with|requires? --|"
    r"only (supported|valid|available) (with|when)|must (also )?be (set|enabled) (when|with)|at the same time",
    re.I,
)
_MODEL_MSG_RE = re.compile(
    r"\bmodels?\b|architecture|checkpoint|hf_config|model_type|config\.json|does not support|not support(ed)? for",
    re.I,
)
FLAG_IN_MSG_RE = re.compile(r"--[a-z][a-z0-9-]+")

_NOT_IMPL = {"NotImplementedError"}
_DEP_CLASSES = {"ImportError", "ModuleNotFoundError"}
_TIMEOUT_CLASSES = {"TimeoutError", "asyncio.TimeoutError", "Timeout", "ReadTimeout"}
_NET_CLASSES = {
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "BrokenPipeError",
    "socket.error",
}
_IO_CLASSES = {
    "FileNotFoundError",
    "OSError",
    "IOError",
    "IsADirectoryError",
    "PermissionError",
    "FileExistsError",
}
_RES_CLASSES = {"MemoryError", "OutOfMemoryError", "torch.cuda.OutOfMemoryError"}


@dataclass(frozen=True)
class Kind:
    error_type: str
    background: str
    handling: str
    severity: str


def classify(site: Site, views: list[AtomView], total: Reads) -> Kind:
    cls = site.error_class
    short = cls.rsplit(".", 1)[-1]
    msg = site.message.template if site.message else ""
    flags_in_msg = FLAG_IN_MSG_RE.findall(msg)
    n_flags = len(total.flags) + len({f for f in flags_in_msg if f not in {x.flag for x in total.flags}})
    has_model = any(v.model for v in views) or bool(_MODEL_MSG_RE.search(msg))
    has_hw = any(v.hardware for v in views) or bool(_HW_MSG_RE.search(msg))
    severity = "error"
    if short.endswith("Warning"):
        severity = "warning"
    elif short in ("StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyboardInterrupt"):
        severity = "info"
    elif short in _RES_CLASSES or re.search(r"out of memory|corrupt|deadlock|data loss", msg, re.I):
        severity = "critical"

    if site.http_status is not None and 400 <= site.http_status < 500:
        return Kind("bad-request", "bad-request", "validation", severity)
    if short in _NOT_IMPL or cls in _NOT_IMPL:
        return Kind("not-implemented", "not-implemented", "fallback", severity)
    if short in _DEP_CLASSES or _DEP_RE.search(msg):
        return Kind("dependency", "missing-dependency", "configuration", severity)
    if cls in _TIMEOUT_CLASSES or short in _TIMEOUT_CLASSES or _TIMEOUT_RE.search(msg):
        return Kind("timeout", "timeout", "retry", severity)
    if cls in _RES_CLASSES or short in _RES_CLASSES or (_RESOURCE_RE.search(msg) and not total.flags):
        return Kind(
            "resource", "resource-exhausted", "configuration" if total.flags else "fail-fast", severity
        )
    guard_reads_config = bool(total.flags or total.envs)
    if short in _NET_CLASSES or (
        short not in ("ValueError", "TypeError", "AssertionError")
        and not guard_reads_config
        and _NET_RE.search(msg)
    ):
        return Kind("network", "network-error", "retry", severity)
    if short in _IO_CLASSES or (
        short not in ("ValueError", "TypeError", "AssertionError")
        and not guard_reads_config
        and _IO_RE.search(msg)
    ):
        return Kind("io", "io-error", "fail-fast", severity)
    if has_hw and (any(v.hardware for v in views) or not total.flags):
        return Kind("hardware", "hardware-unsupported", "fallback", severity)
    if total.flags or flags_in_msg or total.envs:
        if n_flags >= 2 or _CONFLICT_RE.search(msg):
            if has_model and any(v.model for v in views):
                return Kind("validation", "model-feature-mismatch", "validation", severity)
            return Kind("configuration", "flag-conflict", "configuration", severity)
        if has_model and any(v.model for v in views):
            return Kind("validation", "model-feature-mismatch", "validation", severity)
        return Kind("configuration", "invalid-value", "configuration", severity)
    if any(v.model for v in views) and _MODEL_MSG_RE.search(msg):
        return Kind("validation", "model-feature-mismatch", "validation", severity)
    if any(v.request for v in views) and short in ("ValueError", "TypeError", "KeyError"):
        return Kind("bad-request", "bad-request", "validation", severity)
    if site.guard.handlers and short not in ("ValueError", "TypeError"):
        return Kind("runtime", "internal-invariant", "propagate", severity)
    if short == "AssertionError":
        return Kind("internal-invariant", "internal-invariant", "fail-fast", severity)
    if short in ("ValueError", "TypeError", "KeyError", "IndexError", "LookupError"):
        return Kind("validation", "invalid-value", "validation", severity)
    return Kind("runtime", "internal-invariant", "fail-fast", severity)
