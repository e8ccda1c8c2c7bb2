"""The CI script and the workflows hold what the docs promise (read as text, as GitHub would)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def _step(text: str, name: str) -> str:
    """The lines of one step, from its ``- name:`` (or ``uses:``) up to the next step."""
    match = re.search(
        rf"^      - (name: {re.escape(name)}|uses: {re.escape(name)})\n(.*?)(?=^      - |\Z)",
        text,
        re.M | re.S,
    )
    assert match, name
    return match.group(0)


def test_ci_script_keeps_its_own_venv_and_checks_format() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert ".ci/venv" in code
    # It never deletes or uses the developer's .venv.
    assert not re.search(r"(^|[\s/\"'])\.venv\b", code)
    for check in ('ruff" check', 'ruff" format --check', 'mypy"', "-m pytest"):
        assert check in script, check
    assert ".ci/venv/" in (ROOT / ".gitignore").read_text().splitlines()


def test_pull_requests_run_the_ci_script() -> None:
    ci = (WORKFLOWS / "ci.yml").read_text()
    assert re.search(r"^on:\n(  .*\n)*  pull_request:", ci, re.M)
    assert "run: bash .ci/run" in ci


def test_nightly_workflow_epoch_exact_cache_keys_jobs_and_artifact_always() -> None:
    nightly = (WORKFLOWS / "nightly.yml").read_text()
    assert "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)" in nightly
    assert 'echo "JOBS=$(nproc)"' in nightly and '--jobs "$JOBS"' in nightly
    out = _step(nightly, "Restore the previous output folder")
    # The ref's fixed-length hash ends the prefix, so no other ref's entries share it.
    assert "sha256sum | cut -c1-16" in nightly
    assert "restore-keys: sglang-errors-out-v1-${{ env.REF_KEY }}-\n" in out
    assert "if: always()" in _step(nightly, "Upload")
    assert "60 days" in nightly and "60 days" in (ROOT / "docs" / "nightly.md").read_text()
