"""Classification of a site: errorType, backgroundTag, severity, handlingStrategy, following
the cause (:mod:`.cause`), as a table of rules each with the example it is written for."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from extractor.analysis.facts import Site
from extractor.prose.cause import Cause, is_limit

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


def severity_of(site: Site) -> str:
    short = site.error_class.rsplit(".", 1)[-1]
    msg = site.message.template if site.message else ""
    if short.endswith("Warning"):
        return "warning"
    if short in ("StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyboardInterrupt"):
        return "info"
    if short in _RES_CLASSES or re.search(r"out of memory|corrupt|deadlock|data loss", msg, re.I):
        return "critical"
    return "error"


@dataclass(frozen=True)
class KindRule:
    """``when`` holds for the site and its cause: the record gets ``(errorType, backgroundTag,
    handlingStrategy)``. ``example`` is a site the rule is written for."""

    name: str
    example: str
    when: Callable[[Site, Cause], bool]
    kind: tuple[str, str, str]


def _short(site: Site) -> str:
    return site.error_class.rsplit(".", 1)[-1]


def _msg(site: Site) -> str:
    return site.message.template if site.message else ""


def _conflict(site: Site, cause: Cause) -> bool:
    flags = [n for n in cause.names if n.startswith("--")]
    return len(flags) >= 2 or bool(_CONFLICT_RE.search(_msg(site)))


KIND_RULES: tuple[KindRule, ...] = (
    KindRule(
        "ruled-out",
        "if self.n > 0: ... else: raise  (twice: the second cannot run)",
        lambda s, c: c.rule == "ruled-out",
        ("internal-invariant", "internal-invariant", "fail-fast"),
    ),
    KindRule(
        "http-4xx",
        "return self.create_error_response(msg, status_code=400)",
        lambda s, c: s.http_status is not None and 400 <= s.http_status < 500,
        ("bad-request", "bad-request", "validation"),
    ),
    KindRule(
        "dependency",
        'raise ImportError("please install flashinfer")',
        lambda s, c: c.kind == "dependency",
        ("dependency", "missing-dependency", "configuration"),
    ),
    KindRule(
        "not-implemented-setting",
        'if server_args.attention_backend == "x": raise NotImplementedError',
        lambda s, c: _short(s) in _NOT_IMPL and c.kind in ("flag", "env"),
        ("not-implemented", "not-implemented", "configuration"),
    ),
    KindRule(
        "flag-with-model",
        'if args.enable_x and kimi_linear_config(model_config) is None: raise ValueError("...")',
        lambda s, c: c.kind in ("flag", "env") and c.with_model,
        ("validation", "model-feature-mismatch", "validation"),
    ),
    KindRule(
        "flag-conflict",
        'if args.a and args.b: raise ValueError("--a is not compatible with --b")',
        lambda s, c: c.kind in ("flag", "env") and _conflict(s, c),
        ("configuration", "flag-conflict", "configuration"),
    ),
    KindRule(
        "flag-value",
        'if args.tp_size <= 0: raise ValueError("--tp-size must be positive")',
        lambda s, c: c.kind in ("flag", "env") or (c.rule == "unknown-keys" and c.names[0].startswith("--")),
        ("configuration", "invalid-value", "configuration"),
    ),
    KindRule(
        "not-implemented-model",
        'if hf_config.model_type == "x": raise NotImplementedError("x is not supported yet")',
        lambda s, c: _short(s) in _NOT_IMPL and c.kind == "model",
        ("not-implemented", "model-feature-mismatch", "validation"),
    ),
    KindRule(
        "not-implemented-hardware",
        'if _is_npu: raise NotImplementedError("not yet on NPU")',
        lambda s, c: _short(s) in _NOT_IMPL and c.kind == "hardware",
        ("not-implemented", "hardware-unsupported", "fallback"),
    ),
    KindRule(
        "not-implemented-input",
        'if request.n > 1: raise NotImplementedError("n > 1")',
        lambda s, c: _short(s) in _NOT_IMPL and c.kind == "input",
        ("not-implemented", "bad-request", "validation"),
    ),
    KindRule(
        "model",
        'if hf_config.head_dim != 128: raise ValueError("head_dim must be 128")',
        lambda s, c: c.kind == "model",
        ("validation", "model-feature-mismatch", "validation"),
    ),
    KindRule(
        "hardware",
        'if not is_cuda(): raise RuntimeError("requires CUDA")',
        lambda s, c: c.kind == "hardware",
        ("hardware", "hardware-unsupported", "fallback"),
    ),
    KindRule(
        "missing-path",
        "if not os.path.exists(path): raise FileNotFoundError(path)",
        lambda s, c: c.rule == "missing-path",
        ("io", "io-error", "validation"),
    ),
    KindRule(
        "download",
        'raise RuntimeError("failed to download the weights")',
        lambda s, c: c.rule == "timeout" and c.names[:1] == ("network",),
        ("network", "network-error", "retry"),
    ),
    KindRule(
        "input",
        'if request.n > 1: raise ValueError("n > 1 is not supported")',
        lambda s, c: c.kind == "input",
        ("bad-request", "bad-request", "validation"),
    ),
    KindRule(
        "passed-on-network",
        'except requests.RequestException as e: raise RuntimeError(f"cannot reach {url}: {e}")',
        lambda s, c: c.rule == "passed-on" and c.names[:1] == ("network",),
        ("network", "network-error", "retry"),
    ),
    KindRule(
        "passed-on-timeout",
        'except TimeoutError as e: raise RuntimeError("no answer") from e',
        lambda s, c: c.rule == "passed-on" and c.names[:1] == ("timeout",),
        ("timeout", "timeout", "retry"),
    ),
    KindRule(
        "passed-on-file",
        'except OSError as e: raise RuntimeError(f"cannot read {path}: {e}")',
        lambda s, c: c.rule == "passed-on" and c.names[:1] == ("file",),
        ("io", "io-error", "fail-fast"),
    ),
    KindRule(
        "timeout",
        'raise TimeoutError("did not respond within 30 s")',
        lambda s, c: (
            c.rule == "timeout" or _short(s) in _TIMEOUT_CLASSES or bool(_TIMEOUT_RE.search(_msg(s)))
        ),
        ("timeout", "timeout", "retry"),
    ),
    KindRule(
        "limit-message",
        'assert gated, "the fused path currently supports gated SwiGLU only"',
        lambda s, c: c.kind == "internal" and is_limit(s),
        ("not-implemented", "not-implemented", "fallback"),
    ),
    KindRule(
        "not-implemented",
        "raise NotImplementedError",
        lambda s, c: _short(s) in _NOT_IMPL,
        ("not-implemented", "not-implemented", "fallback"),
    ),
    KindRule(
        "resource",
        'raise RuntimeError("Not enough memory")',
        lambda s, c: c.kind == "resource" or _short(s) in _RES_CLASSES,
        ("resource", "resource-exhausted", "fail-fast"),
    ),
    KindRule(
        "network",
        "raise ConnectionError(...)",
        lambda s, c: _short(s) in _NET_CLASSES,
        ("network", "network-error", "retry"),
    ),
    KindRule(
        "io",
        "raise FileNotFoundError(path)",
        lambda s, c: _short(s) in _IO_CLASSES,
        ("io", "io-error", "fail-fast"),
    ),
    KindRule(
        "handler",
        "except OSError as e: raise RuntimeError(...) from e",
        lambda s, c: bool(s.guard.handlers),
        ("runtime", "internal-invariant", "propagate"),
    ),
    KindRule(
        "internal",
        'assert x.shape == y.shape, "shape mismatch"',
        lambda s, c: True,
        ("internal-invariant", "internal-invariant", "fail-fast"),
    ),
)


def classify(site: Site, cause: Cause) -> Kind:
    """errorType, backgroundTag and handlingStrategy from the first rule of :data:`KIND_RULES`
    that holds; the severity from the class and message."""
    for rule in KIND_RULES:
        if rule.when(site, cause):
            e, b, h = rule.kind
            return Kind(e, b, h, severity_of(site))
    raise AssertionError("the last rule always holds")
