"""Which part of sglang a record's file belongs to: the grouping of changelogs, stats and the site.

It depends on the file path alone, so every tool over datasets (``diff``, ``stats``, ``site``)
imports it from here without importing one another.
"""

from __future__ import annotations

__all__ = ["subsystem"]


def subsystem(file_path: str) -> str:
    """The part of sglang a file belongs to: ``python/sglang/srt/mem_cache/x.py`` -> ``srt/mem_cache``.

    At most two folders below the package root; a file directly in the package root gives the
    package's name (``sglang``, ``sgl_kernel``).
    """
    parts = file_path.split("/")
    if parts[:2] == ["python", "sglang"]:
        parts = parts[1:]
    elif parts[:2] == ["sgl-kernel", "python"]:
        parts = parts[2:]
    else:
        folders = parts[:-1]
        return "/".join(folders[:2]) if folders else "(top level)"
    # parts now starts with the package folder (sglang or sgl_kernel).
    folders = parts[1:-1]
    return "/".join(folders[:2]) if folders else parts[0]
