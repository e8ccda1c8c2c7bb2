"""A small factory of valid schema-v2 records for the match tests (synthetic, sglang-shaped)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from extractor.records import message_pattern
from extractor.records.jsonl import write_dataset
from extractor.records.model import ErrorRecord

SHA = "8905cbd42f4a27dbecad6487cd3904278756fef8"
VERSION = "2026-01-01T00:00:00.000Z"


def template_pattern(template: str) -> str:
    """``"got {x} for {y}"`` -> a fullmatch regex whose placeholders match any text."""
    parts = re.split(r"\{[^{}]*\}", template)
    return message_pattern.WILDCARD.join(message_pattern.escape(p) for p in parts)


def make_record(
    file_path: str,
    line: int,
    error_class: str,
    template: str,
    *,
    pattern: str | None = None,
    source_code: str | None = None,
    solution: str = "Fix the configuration.",
    source_start: int | None = None,
    documentation: str = "Raised when the check fails.",
    sha: str = SHA,
    tags: list[str] | None = None,
    trigger: str = "A bad launch option.",
) -> ErrorRecord:
    """One record at ``file_path:line`` raising ``error_class`` with a message ``template``."""
    digest = hashlib.sha256(f"{file_path}:{line}:{error_class}:{template}".encode()).hexdigest()[:16]
    code = source_code if source_code is not None else f"raise {error_class}(f{template!r})"
    n_lines = code.count("\n") + 1
    start = line if source_start is None else source_start
    end = start + n_lines - 1
    slug = re.sub(r"[^a-z0-9]+", "-", template.lower()).strip("-")[:40].strip("-") or "error"
    return ErrorRecord(
        id=digest,
        repo="sgl-project/sglang",
        slug=slug,
        errorCode=None,
        errorMessage=template,
        messagePattern=pattern if pattern is not None else template_pattern(template),
        errorType="validation",
        errorClass=error_class,
        httpStatus=None,
        severity="error",
        filePath=file_path,
        lineNumber=line,
        sourceCode=code,
        sourceCodeStart=start,
        sourceCodeEnd=end,
        githubUrl=f"https://github.com/sgl-project/sglang/blob/{sha}/{file_path}#L{start}-L{end}",
        documentation=documentation,
        triggerScenarios=trigger,
        commonSituations="Copying flags between models.",
        solutions=[solution],
        exampleFix="# before\n--bad\n# after\n--good",
        handlingStrategy="validation",
        validationCode="",
        typeGuard=None,
        tryCatchPattern=None,
        preventionTips=[],
        tags=tags if tags is not None else ["test"],
        backgroundTag="invalid-value",
        analyzedSha=sha,
        analyzedAt=VERSION,
        schemaVersion=2,
    )


def write(path: Path, records: list[ErrorRecord]) -> Path:
    write_dataset(path, records, VERSION)
    return path
