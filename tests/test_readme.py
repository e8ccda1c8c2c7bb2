"""The README's layout section matches the package tree, and it documents the exit codes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "extractor"


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, title
    return match.group(1)


def test_layout_names_every_module_and_package() -> None:
    layout = _section("Layout")
    words = set(re.findall(r"[A-Za-z_][\w]*(?:\.py|/)?", layout))
    for path in sorted(PACKAGE.iterdir()):
        if path.suffix == ".py" and path.name not in ("__init__.py", "__main__.py"):
            assert path.name in words, f"{path.name} missing from the README layout"
        elif path.is_dir() and (path / "__init__.py").exists():
            assert f"{path.name}/" in words, f"{path.name}/ missing from the README layout"
            for module in path.rglob("*.py"):
                name = module.parent.name + "/" if module.name == "__init__.py" else module.stem
                assert name.rstrip("/") in {w.rstrip("/").removesuffix(".py") for w in words}, (
                    f"{module.relative_to(ROOT)} missing from the README layout"
                )


def test_exit_codes_are_documented() -> None:
    table = _section("Commands")
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in table, code
