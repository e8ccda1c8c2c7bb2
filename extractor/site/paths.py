"""Which part of sglang a file belongs to, as the site groups its pages.

The grouping is the one the nightly changelogs use (``extractor.datasets.diff.subsystem``, and a
test keeps the two equal). It is restated here because the dataset commands import the library
API, which imports this package: importing them back would close a cycle.
"""

from __future__ import annotations

__all__ = ["subsystem"]


def subsystem(file_path: str) -> str:
    """``python/sglang/srt/mem_cache/x.py`` -> ``srt/mem_cache``: at most two folders below the
    package root; a file directly in the package root gives the package's name."""
    parts = file_path.split("/")
    if parts[:2] == ["python", "sglang"]:
        parts = parts[1:]
    elif parts[:2] == ["sgl-kernel", "python"]:
        parts = parts[2:]
    else:
        folders = parts[:-1]
        return "/".join(folders[:2]) if folders else "(top level)"
    folders = parts[1:-1]
    return "/".join(folders[:2]) if folders else parts[0]
