"""Synthetic, schema-valid error records for the diff tests.

A record is built from the few things a diff cares about (file, enclosing function, class,
message, guard, line); everything else is filled consistently (window, permalink, pattern), so
``ErrorRecord`` validates it exactly as it validates extractor output.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from extractor.records import message_pattern
from extractor.records.jsonl import write_dataset
from extractor.records.model import ErrorRecord

SHA_OLD = "1" * 40
SHA_NEW = "2" * 40
REPO = "sgl-project/sglang"
VERSION_OLD = "2026-01-01T00:00:00.000Z"
VERSION_NEW = "2026-02-01T00:00:00.000Z"


def site_id(file: str, scope: str, cls: str, message: str) -> str:
    """An id that, like the extractor's, ignores line numbers."""
    return hashlib.sha256(f"{file}\0{scope}\0{cls}\0{message}".encode()).hexdigest()[:16]


def slugify(message: str, fallback: str) -> str:
    words = re.findall(r"[a-z0-9]+", message.lower())[:8]
    return "-".join(words) or fallback


def make_record(
    *,
    file: str = "python/sglang/srt/managers/scheduler.py",
    scope: str = "check",
    cls: str = "ValueError",
    message: str = "tp_size must be a positive integer",
    guard: str = "tp_size <= 0",
    line: int = 10,
    sha: str = SHA_OLD,
    rid: str | None = None,
    slug: str | None = None,
    documentation: str | None = None,
    indent: str = "    ",
    above: tuple[str, ...] = (),
) -> ErrorRecord:
    """One record whose window is ``above`` lines, ``def scope``, the guard and the raise.

    ``line`` is the line of the ``raise``; ``indent`` is the indentation of the ``def`` (a
    method moved into a class gets more of it, which the diff must ignore).
    """
    window = [
        *above,
        f"{indent}def {scope}(self, tp_size):",
        f"{indent}    if {guard}:",
        f"{indent}        raise {cls}({message!r})",
    ]
    start = line - len(window) + 1
    assert start >= 1, "line too small for the window"
    end = line
    return ErrorRecord(
        id=rid or site_id(file, scope, cls, message),
        repo=REPO,
        slug=slug or slugify(message, "error"),
        errorCode=None,
        errorMessage=message,
        messagePattern=message_pattern.escape(message),
        errorType="validation",
        errorClass=cls,
        httpStatus=None,
        severity="error",
        filePath=file,
        lineNumber=line,
        sourceCode="\n".join(window),
        sourceCodeStart=start,
        sourceCodeEnd=end,
        githubUrl=f"https://github.com/{REPO}/blob/{sha}/{file}#L{start}-L{end}",
        # Like the extractor's prose, these quote the site's own position; the diff must see past it.
        documentation=documentation or f"In `{scope}` ({file}), line {line} raises {cls} when {guard}.",
        triggerScenarios=f"Calling {scope} ({file.removeprefix('python/sglang/')}:{line}) when {guard}.",
        commonSituations="A misconfigured launch.",
        solutions=[f"Make sure not ({guard})"],
        exampleFix="# before\nbad\n# after\ngood",
        handlingStrategy="validation",
        validationCode=f"if {guard}:\n    ...",
        typeGuard=None,
        tryCatchPattern=None,
        preventionTips=["Check inputs early"],
        tags=["validation"],
        backgroundTag="invalid-value",
        analyzedSha=sha,
        analyzedAt="2026-01-01T00:00:00.000Z" if sha == SHA_OLD else "2026-02-01T00:00:00.000Z",
        schemaVersion=2,
    )


def regenerate(record: ErrorRecord, *, sha: str = SHA_NEW, **changes: object) -> ErrorRecord:
    """``record`` as a later extraction would produce it: same site, new sha, given changes applied.

    ``line`` shifts the whole window; ``file``, ``message``, ``cls``, ``guard``, ``scope``,
    ``indent`` rebuild it. The id is recomputed unless ``rid`` is given, exactly as
    :func:`make_record` would.
    """
    scope = re.search(r"def (\w+)\(", record.sourceCode)
    guard = re.search(r"if (.*):\n", record.sourceCode)
    indent = re.match(r"( *)def ", record.sourceCode.splitlines()[-3])
    assert scope and guard and indent
    window = record.sourceCode.splitlines()
    args: dict[str, object] = {
        "file": record.filePath,
        "scope": scope.group(1),
        "cls": record.errorClass,
        "message": record.errorMessage,
        "guard": guard.group(1),
        "line": record.lineNumber,
        "indent": indent.group(1),
        "above": tuple(window[:-3]),
        "sha": sha,
    }
    args.update(changes)
    return make_record(**args)  # type: ignore[arg-type]


def write(path: Path, records: list[ErrorRecord], version: str = VERSION_OLD) -> Path:
    write_dataset(path, records, version)
    return path
