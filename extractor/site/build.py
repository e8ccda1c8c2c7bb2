"""Writing the site: every page rendered from the templates into a fresh folder, then swapped in.

The site is built beside ``out`` under a temporary name and takes its place only when complete,
so a failed build leaves the previous site as it was. A folder that holds something other than
a site this command wrote is never replaced.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from extractor import __version__
from extractor.errors import ExtractorError
from extractor.site.catalogue import Catalogue, Entry, load_catalogue
from extractor.site.charts import bar_chart, line_chart
from extractor.site.highlight import Highlighter
from extractor.site.search_index import search_index_js

__all__ = ["MARKER", "SiteReport", "build_site"]

MARKER = ".sglang-errors-site"
"""The file that marks a folder as a site this command wrote (and may therefore replace)."""

_MESSAGE_SHOWN = 200
_CHART_SERIES = 8


@dataclass(frozen=True)
class SiteReport:
    """What a build wrote."""

    out: Path
    pages: int
    records: int
    flags: int
    envs: int
    versions: int
    seconds: float


@dataclass(frozen=True)
class _SiteInfo:
    """What every page's header and footer show."""

    total: int
    repo: str
    sha: str
    dataset_version: str
    source_name: str
    tool_version: str
    versions: bool
    subsystem_pages: dict[str, str]


def _truncate_message(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MESSAGE_SHOWN else flat[: _MESSAGE_SHOWN - 1] + "…"


def _short_path(path: str) -> str:
    """A file path without the package prefix every sglang path shares, for narrow columns."""
    for prefix in ("python/sglang/", "sgl-kernel/python/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


_CODE_SPAN = re.compile(r"`([^`]*)`")


def _ticks(text: str) -> Markup:
    """Prose with markdown code spans (`x`) as ``<code>`` elements, everything else escaped."""
    escaped = str(escape(text))  # escaping leaves backticks alone
    if text.count("`") % 2:  # an unpaired backtick: show the text as it is
        return Markup(escaped)
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", escaped))


def _environment(catalogue: Catalogue) -> Environment:
    env = Environment(
        loader=PackageLoader("extractor.site", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["truncate_message"] = _truncate_message
    env.filters["ticks"] = _ticks
    env.filters["short_path"] = _short_path
    # A record appears in the related lists of many others: its list item is rendered once.
    item = env.get_template("record_item.html.j2")
    items: dict[tuple[int, str], Markup] = {}

    def record_item(e: Entry, root: str) -> Markup:
        key = (id(e), root)
        if key not in items:
            items[key] = Markup(item.render(e=e, root=root).rstrip("\n"))
        return items[key]

    env.globals["record_item"] = record_item
    env.globals["site"] = _SiteInfo(
        total=len(catalogue.entries),
        repo=catalogue.repo,
        sha=catalogue.sha,
        dataset_version=catalogue.dataset_version,
        source_name=catalogue.source_name,
        tool_version=__version__,
        versions=bool(catalogue.versions),
        subsystem_pages=catalogue.subsystem_pages,
    )
    return env


class _Writer:
    """Renders templates into files under one folder and counts the pages."""

    def __init__(self, env: Environment, folder: Path) -> None:
        self.env = env
        self.folder = folder
        self.pages = 0
        self._made: set[Path] = set()

    def page(self, relative: str, template: str, **context: Any) -> None:
        root = "../" * relative.count("/")
        text = self.env.get_template(template).render(root=root, **context)
        self.raw(relative, text.encode())
        self.pages += 1

    def raw(self, relative: str, data: bytes) -> None:
        path = self.folder / relative
        if path.parent not in self._made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        path.write_bytes(data)


# -- record pages, in worker processes ---------------------------------------------------------

# Set before the workers fork and inherited by them: the catalogue is never pickled.
_SHARED: dict[str, Any] = {}


def _record_pages(bounds: tuple[int, int]) -> int:
    catalogue: Catalogue = _SHARED["catalogue"]
    # One environment (its compiled templates) and one highlighter per process, not per chunk.
    if "writer" not in _SHARED:
        _SHARED["writer"] = _Writer(_environment(catalogue), _SHARED["folder"])
        _SHARED["light"] = Highlighter()
    writer: _Writer = _SHARED["writer"]
    before = writer.pages
    for entry in catalogue.entries[bounds[0] : bounds[1]]:
        _record_page(writer, _SHARED["light"], catalogue, entry)
    return writer.pages - before


def _record_page(writer: _Writer, light: Highlighter, catalogue: Catalogue, e: Entry) -> None:
    r = e.record
    knobs = [(catalogue.flags[name], e.mentions.constraints_on(name)) for name in e.mentions.flags] + [
        (catalogue.envs[name], e.mentions.constraints_on(name)) for name in e.mentions.envs
    ]
    writer.page(
        e.href,
        "error.html.j2",
        e=e,
        knobs=knobs,
        window=light.window(r.sourceCode, r.sourceCodeStart, r.lineNumber),
    )


def _write_record_pages(catalogue: Catalogue, folder: Path, jobs: int) -> int:
    count = len(catalogue.entries)
    if jobs <= 1 or count < 200 or "fork" not in multiprocessing.get_all_start_methods():
        _SHARED.update(catalogue=catalogue, folder=folder)
        try:
            return _record_pages((0, count))
        finally:
            _SHARED.clear()
    step = -(-count // (jobs * 4))
    chunks = [(i, min(i + step, count)) for i in range(0, count, step)]
    _SHARED.update(catalogue=catalogue, folder=folder)
    # Objects the children only read stay shared: without the freeze, the collector's
    # bookkeeping writes into every page of the heap and copies it into each child.
    gc.freeze()
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            return sum(pool.map(_record_pages, chunks))
    finally:
        gc.unfreeze()
        _SHARED.clear()


# -- the other pages ---------------------------------------------------------------------------


def _static(writer: _Writer) -> None:
    files = resources.files("extractor.site") / "static"
    css = (files / "site.css").read_text(encoding="utf-8")
    writer.raw("static/site.css", (css + "\n/* Pygments */\n" + Highlighter.css() + "\n").encode())
    writer.raw("static/search.js", (files / "search.js").read_bytes())
    # GitHub Pages would otherwise run Jekyll over the folder.
    writer.raw(".nojekyll", b"")


def _overview_pages(writer: _Writer, catalogue: Catalogue) -> None:
    counts = catalogue.counts_by_subsystem()
    bars = [(name, n, catalogue.subsystem_pages[name]) for name, n in counts]
    chart = bar_chart(bars, title="Errors per subsystem")
    classes = Counter(e.record.errorClass for e in catalogue.entries)
    causes = Counter(e.record.backgroundTag for e in catalogue.entries)
    writer.page(
        "index.html",
        "index.html.j2",
        chart=chart,
        subsystems=sorted(counts),
        classes=sorted(classes.items(), key=lambda x: (-x[1], x[0])),
        causes=sorted(causes.items(), key=lambda x: (-x[1], x[0])),
        tags=sorted({t for e in catalogue.entries for t in e.record.tags}),
    )
    writer.page("subsystems.html", "subsystems.html.j2", chart=chart, counts=counts)
    for name, entries in catalogue.subsystems.items():
        writer.page(catalogue.subsystem_pages[name], "subsystem.html.j2", name=name, entries=entries)
    writer.page(
        "flags.html",
        "knobs.html.j2",
        flags=list(catalogue.flags.values()),
        envs=list(catalogue.envs.values()),
    )
    knobs = [*catalogue.flags.values(), *catalogue.envs.values()]
    knob_pages = {k.name: k.page for k in knobs}
    for knob in knobs:
        writer.page(knob.page, "knob.html.j2", knob=knob, groups=knob.by_subsystem(), knob_pages=knob_pages)
    writer.raw("search-index.js", search_index_js(catalogue))


def _version_pages(writer: _Writer, catalogue: Catalogue) -> None:
    versions = catalogue.versions
    if not versions:
        return
    latest = versions[-1].counts
    rows = sorted({name for v in versions for name in v.counts}, key=lambda n: (-latest.get(n, 0), n))
    series = [(name, [v.counts.get(name, 0) for v in versions]) for name in rows[:_CHART_SERIES]]
    chart = line_chart(
        [v.sha[:7] for v in versions], series, title="Errors per subsystem across the kept versions"
    )
    writer.page("versions.html", "versions.html.j2", versions=versions, rows=rows, chart=chart)
    pages = {e.record.id: e.href for e in catalogue.entries}
    for v in versions:
        writer.page(v.href, "version.html.j2", v=v, pages=pages)


# -- the build ---------------------------------------------------------------------------------


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ExtractorError(str(out), "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ExtractorError(
            str(out), f"folder is not empty and holds no {MARKER}: not a site this command wrote"
        )


def _swap_in(built: Path, out: Path) -> None:
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    try:
        built.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def build_site(source: Path, out: Path, *, jobs: int = 1) -> SiteReport:
    """Write the static site of a dataset file or nightly folder ``source`` into ``out``."""
    started = time.monotonic()
    _check_target(out)
    catalogue = load_catalogue(source)
    out.parent.mkdir(parents=True, exist_ok=True)
    built = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(built, ignore_errors=True)
    try:
        built.mkdir()
        writer = _Writer(_environment(catalogue), built)
        _static(writer)
        _overview_pages(writer, catalogue)
        _version_pages(writer, catalogue)
        pages = writer.pages + _write_record_pages(catalogue, built, jobs)
        writer.raw(MARKER, f"sglang-errors {__version__}\n".encode())
        _swap_in(built, out)
    except OSError as exc:
        raise ExtractorError(str(out), f"cannot write the site ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(built, ignore_errors=True)
    return SiteReport(
        out=out,
        pages=pages,
        records=len(catalogue.entries),
        flags=len(catalogue.flags),
        envs=len(catalogue.envs),
        versions=len(catalogue.versions),
        seconds=time.monotonic() - started,
    )
