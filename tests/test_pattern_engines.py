"""Python ``re``, RE2, JavaScript (with and without ``u``) and the linear matcher agree on the
patterns the fixture modules produce (``bench/pattern_engines.py`` run as a real process).

An engine whose runtime is missing here (no ``node``, no ``google-re2``) is reported as skipped
by the script; with none of them available the test skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extractor.records import message_pattern

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def fixture_patterns() -> list[str]:
    patterns = set()
    for golden in FIXTURES.glob("*/*.jsonl"):
        for raw in golden.read_text(encoding="utf-8").splitlines():
            pattern = json.loads(raw).get("pattern")
            if isinstance(pattern, str):
                patterns.add(pattern)
    # Shapes the fixtures may not hold: every escape, a nested choice, the whitespace classes.
    patterns |= {
        message_pattern.escape("".join(chr(c) for c in range(0x80)) + "é€\u2028"),
        "(?:a(?:b|c)|d)" + message_pattern.WILDCARD + "e",
        message_pattern.SPACE_RUN + "x" + message_pattern.BLANK_RUN + "\\n" + message_pattern.DIGIT,
    }
    return sorted(patterns)


def test_engines_agree_on_renderings_and_near_misses(tmp_path: Path) -> None:
    dataset = tmp_path / "patterns.jsonl"
    lines = [json.dumps({"record": {"messagePattern": p}}) for p in fixture_patterns()]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "bench/pattern_engines.py", str(dataset), "--json"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    n = report["patterns"]
    assert n == len(lines)
    assert report["python"]["compiled"] == n
    # Every generated rendering (not the near-misses) matches in Python.
    assert report["python"]["renderings matched"] == n * 6
    assert report["linear"]["compiled"] == n and report["linear"]["agree"] == report["linear"]["of"]
    available = [name for name in ("re2", "js-u", "js") if isinstance(report[name], dict)]
    for name in available:
        got = report[name]
        assert got["compiled"] == n, (name, got)
        assert got["agree"] == got["of"], (name, got["examples"])
    assert proc.returncode == 0
    if not available:
        pytest.skip(
            "neither node nor google-re2 is available: only Python and the linear matcher were compared"
        )


def test_a_non_portable_pattern_is_reported(tmp_path: Path) -> None:
    dataset = tmp_path / "bad.jsonl"
    dataset.write_text(json.dumps({"record": {"messagePattern": "a\\-b"}}) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "bench/pattern_engines.py", str(dataset)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "linear  compiled 0/1" in proc.stdout
