"""A small sglang-shaped repository, its nightly folder, and checks over a built site.

    folder = make_nightly(tmp)          # two nightly runs over two commits of the fixtures
    site = build(folder, tmp / "site")  # the real CLI: python -m extractor site
    assert dead_links(site) == []

The fixture modules (``tests/fixtures/site``) hold argument checks on flags, checks on
environment variables, asserts and dispatch errors; the second commit adds, rewords and drops an
error so the second version has a changelog with every kind of change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import orjson

from extractor import api
from tests.gitrepos import add_commit, make_repo

__all__ = ["build", "dataset_records", "dead_links", "make_nightly", "run_site"]

FIXTURES = Path(__file__).parent / "fixtures" / "site"
REPO_ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def make_nightly(tmp: Path) -> Path:
    """A nightly folder with two kept versions; the newer one has a changelog."""
    repo, _ = make_repo(
        tmp / "src",
        [
            {
                "python/sglang/srt/server_args.py": _fixture("server_args.py"),
                "python/sglang/srt/environ.py": _fixture("environ.py"),
                "python/sglang/srt/mem_cache/pool.py": _fixture("pool.py"),
                "python/sglang/srt/layers/attention.py": _fixture("attention.py"),
            }
        ],
    )
    out = tmp / "nightly"
    old_epoch = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        options = api.ExtractOptions.build(source=str(repo), cache_dir=tmp / "cache", jobs=1)
        api.nightly(options, ref="main", out_dir=out)
        add_commit(
            repo, {"python/sglang/srt/layers/attention.py": _fixture("attention_v2.py")}, "attention v2"
        )
        api.nightly(options, ref="main", out_dir=out)
    finally:
        if old_epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old_epoch
    return out


def current_dataset(folder: Path) -> Path:
    return folder / str(orjson.loads((folder / "manifest.json").read_bytes())["datasetFile"])


def dataset_records(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line)["record"] for line in path.read_bytes().splitlines() if line.strip()]


def run_site(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m extractor site ARGS`` in a real process."""
    return subprocess.run(
        [sys.executable, "-m", "extractor", "site", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
        check=False,
    )


def build(source: Path, out: Path, *extra: str) -> Path:
    done = run_site(str(source), "--out", str(out), *extra)
    assert done.returncode == 0, done.stderr
    return out


class _Links(HTMLParser):
    """Every href/src of a page and every id it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value)
            elif name in ("id", "name"):
                self.ids.add(value)


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def dead_links(site: Path) -> list[str]:
    """``page: link`` for every internal link to a missing file or a missing ``#id`` on a page.

    Links that leave the site (``https:``) are not followed; ``index.html#tag=...`` style
    fragments are the search page's filters, not anchors, and only their file is checked.
    """
    pages = sorted(site.rglob("*.html"))
    ids: dict[Path, set[str]] = {}
    parsed = {page: _parse(page) for page in pages}
    for page, links in parsed.items():
        ids[page.resolve()] = links.ids
    dead: list[str] = []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            missing_file = not target.is_file() or not target.is_relative_to(site.resolve())
            anchor = unquote(parts.fragment)
            missing_anchor = bool(anchor) and "=" not in anchor and anchor not in ids.get(target, {anchor})
            if missing_file or missing_anchor:
                dead.append(f"{page.relative_to(site)}: {link}")
    return dead
