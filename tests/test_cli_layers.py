"""The CLI only parses and renders: its modules reach the product through ``extractor.api`` alone.

Read with ``ast`` (every run-time import, function-level ones included): the CLI modules may
import the api, the renderers, the CLI's own modules, the defaults and the error type, never the
engine, the analysis, the source access or a dataset tool directly.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "extractor"
CLI_MODULES = ["cli.py", "cli_dataset.py", "cli_options.py", "cliapp.py"]
ALLOWED = (
    "extractor.api",
    "extractor.render",
    "extractor.cli",
    "extractor.cli_dataset",
    "extractor.cli_options",
    "extractor.cliapp",
    "extractor.config",
    "extractor.errors",
)


def _imports(path: Path) -> list[str]:
    """The ``extractor`` modules (or names) ``path`` imports at run time."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = []  # never runs
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("extractor"):
            names.extend(
                f"{node.module}.{a.name}" if node.module == "extractor" else node.module for a in node.names
            )
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names if a.name.startswith("extractor"))
    return names


def _allowed(name: str) -> bool:
    if name == "extractor.__version__" or name.endswith(".render"):
        return True  # the version string; a dataset tool's own renderer (match's table)
    return any(name == a or name.startswith(a + ".") for a in ALLOWED)


def test_cli_modules_reach_the_product_through_the_api_only() -> None:
    for module in CLI_MODULES:
        offending = [n for n in _imports(PACKAGE / module) if not _allowed(n)]
        assert offending == [], f"{module} imports {offending}"


def test_the_check_sees_a_bypass(tmp_path: Path) -> None:
    bad = tmp_path / "cli.py"
    bad.write_text("def f():\n    from extractor.datasets.diff import diff_records\n")
    assert [n for n in _imports(bad) if not _allowed(n)] == ["extractor.datasets.diff"]
