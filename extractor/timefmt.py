"""Timestamps as the dataset writes them, fixed by ``SOURCE_DATE_EPOCH`` for reproducible output."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from extractor.errors import ExtractorError


def iso_millis(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``: ``2026-08-28T05:10:05.995Z``."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def build_time() -> datetime:
    """``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or raw.strip() == "":
        return datetime.now(UTC)
    try:
        return datetime.fromtimestamp(int(raw.strip()), UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise ExtractorError("SOURCE_DATE_EPOCH", f"not a Unix timestamp in seconds: {raw!r}") from exc
