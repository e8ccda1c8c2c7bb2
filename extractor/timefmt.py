"""Timestamps as the dataset writes them, fixed by ``SOURCE_DATE_EPOCH`` for reproducible output."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from decimal import Decimal

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
    # Datasets carry milliseconds, so a fractional epoch (as a datasetVersion converts to) is
    # accepted; Decimal keeps "…600.123" from becoming …600.122999 on the way.
    try:
        value = Decimal(raw.strip())
        if not value.is_finite() or value < 0:
            raise ValueError(raw)
        whole = int(value)
        micros = int((value - whole) * 1_000_000)
        return datetime.fromtimestamp(whole, UTC) + timedelta(microseconds=micros)
    except (ValueError, ArithmeticError, OverflowError, OSError) as exc:
        raise ExtractorError(
            "SOURCE_DATE_EPOCH", f"not a Unix timestamp in seconds (e.g. 1767225600 or 1767225600.5): {raw!r}"
        ) from exc
