"""The static catalogue built by the real CLI from a nightly folder and from a dataset file."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import orjson
import pytest

from extractor.site.build import MARKER
from extractor.site.search_index import js_pattern
from tests.sitebuild import build, current_dataset, dataset_records, dead_links, make_nightly, run_site


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_nightly(tmp_path_factory.mktemp("site-nightly"))


@pytest.fixture(scope="module")
def site(nightly: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(nightly, tmp_path_factory.mktemp("site-out") / "site")


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _text(path: Path) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def test_every_record_has_its_page_with_message_class_and_permalink(nightly: Path, site: Path) -> None:
    records = dataset_records(current_dataset(nightly))
    assert len(records) >= 8
    for r in records:
        page = site / "errors" / f"{r['slug']}.html"
        assert page.is_file(), r["slug"]
        html = page.read_text(encoding="utf-8")
        assert f'href="{r["githubUrl"]}"' in html
        assert str(r["errorClass"]) in html
        assert f"{r['filePath']}</code>, line {r['lineNumber']}" in html
        # The marked line of the window is the raising line.
        marked = re.search(r'<span class="hll"><span class="linenos">\s*(\d+)</span>', html)
        assert marked is not None and int(marked.group(1)) == r["lineNumber"]
    assert len(list((site / "errors").glob("*.html"))) == len(records)


def test_message_text_is_escaped_never_markup(site: Path) -> None:
    html = "".join(p.read_text(encoding="utf-8") for p in sorted((site / "errors").glob("*.html")))
    assert "<script>alert(1)</script>" not in html
    # The first version raised it; the changelog of the second shows it as removed or changed.
    versions = "".join(p.read_text(encoding="utf-8") for p in (site / "versions").glob("*.html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in versions
    assert "<script>alert(1)" not in versions
    index = (site / "search-index.js").read_text(encoding="utf-8")
    assert "</script>" not in index


def test_every_flag_and_env_var_named_has_a_page_with_its_constraints(site: Path) -> None:
    for name in ("tp-size", "dp-size", "enable-dp-attention", "page-size"):
        assert (site / "flags" / f"{name}.html").is_file(), name
    for name in ("sglang_chunk_budget", "sglang_strict_pool"):
        assert (site / "env" / f"{name}.html").is_file(), name
    tp = _text(site / "flags" / "tp-size.html")
    assert "fires when --tp-size is below 1" in tp
    assert "--tp-size must be at least 1" in tp
    dp = _text(site / "flags" / "enable-dp-attention.html")
    assert "--enable-dp-attention requires --dp-size greater than 1" in dp
    assert "srt (" in dp  # grouped by subsystem
    assert "fires when --enable-dp-attention is given; together with --tp-size , --dp-size" in dp
    assert 'href="../flags/dp-size.html"' in (site / "flags" / "enable-dp-attention.html").read_text()
    env = _text(site / "env" / "sglang_strict_pool.html")
    assert "out of tokens: need {need}, have {self.size}" in env
    assert "fires when SGLANG_STRICT_POOL equals 1" in env


def test_record_pages_link_related_records_and_their_flags(nightly: Path, site: Path) -> None:
    by_message = {r["errorMessage"]: r for r in dataset_records(current_dataset(nightly))}
    r = by_message["--enable-dp-attention requires --dp-size greater than 1"]
    html = (site / "errors" / f"{r['slug']}.html").read_text(encoding="utf-8")
    assert 'href="../flags/enable-dp-attention.html"' in html
    assert 'href="../flags/dp-size.html"' in html
    same_function = by_message["--tp-size must be at least 1, got {self.tp_size}"]
    assert f'href="../errors/{same_function["slug"]}.html"' in html


def test_versions_have_changelogs_linked_to_pages_and_source(nightly: Path, site: Path) -> None:
    manifest = orjson.loads((nightly / "manifest.json").read_bytes())
    assert len(manifest["history"]) == 2
    newest = manifest["history"][0]
    page = site / "versions" / (newest["datasetFile"].removesuffix(".jsonl") + ".html")
    html = page.read_text(encoding="utf-8")
    log = orjson.loads((nightly / newest["changelog"]["json"]).read_bytes())
    assert log["added"] and (log["removed"] or log["changed"])
    for r in log["added"]:
        assert f'href="../errors/{r["slug"]}.html"' in html
        assert f'href="{r["githubUrl"]}"' in html
    for r in log["removed"]:
        assert f'href="{r["githubUrl"]}"' in html
    overview = (site / "versions.html").read_text(encoding="utf-8")
    assert overview.count("<polyline") >= 2
    assert newest["sha"][:7] in overview


def test_no_dead_internal_link(site: Path) -> None:
    assert dead_links(site) == []


def test_search_index_holds_every_record_and_js_patterns(nightly: Path, site: Path) -> None:
    text = (site / "search-index.js").read_text(encoding="utf-8")
    assert text.startswith("window.SGLANG_ERRORS_INDEX = ")
    data = orjson.loads(text.removeprefix("window.SGLANG_ERRORS_INDEX = ").rstrip().removesuffix(";"))
    slugs = [row[0] for row in data["records"]]
    assert slugs == [r["slug"] for r in dataset_records(current_dataset(nightly))]
    assert js_pattern(r"got (?s:.*)\.") == r"got [\s\S]*\."
    assert js_pattern(r"a(?:b|c)") is None


def test_same_input_gives_the_same_bytes_with_any_jobs(nightly: Path, site: Path, tmp_path: Path) -> None:
    again = build(nightly, tmp_path / "again", "--jobs", "2")
    assert _tree(again) == _tree(site)


def test_a_dataset_file_builds_without_version_pages(nightly: Path, tmp_path: Path) -> None:
    out = build(current_dataset(nightly), tmp_path / "plain")
    assert not (out / "versions.html").exists()
    assert 'href="versions.html"' not in (out / "index.html").read_text(encoding="utf-8")
    assert dead_links(out) == []


def test_rebuild_replaces_a_site_but_never_another_folder(nightly: Path, tmp_path: Path) -> None:
    out = build(current_dataset(nightly), tmp_path / "s")
    (out / "errors" / "stale.html").write_text("old")
    build(current_dataset(nightly), out)
    assert not (out / "errors" / "stale.html").exists()
    assert (out / MARKER).is_file()

    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    done = run_site(str(current_dataset(nightly)), "--out", str(precious))
    assert done.returncode == 2
    assert f"{precious}: folder is not empty" in done.stderr
    assert (precious / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            b'{"record": {"id": "x"}, "datasetVersion": "2026-01-01T00:00:00.000Z"}\n',
            "bad.jsonl:1: record.id",
        ),
        (b"not json\n", ":1: invalid JSON"),
        (b"", "empty dataset"),
    ],
)
def test_bad_dataset_is_named_and_nothing_is_written(tmp_path: Path, content: bytes, expected: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    done = run_site(str(bad), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert expected in done.stderr
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out.tmp-*"))


def test_nightly_folder_missing_a_named_file_is_an_error(nightly: Path, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(nightly, broken)
    manifest = orjson.loads((broken / "manifest.json").read_bytes())
    (broken / manifest["changelog"]["json"]).unlink()
    done = run_site(str(broken), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "named by the manifest is missing" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_site(str(empty), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "no manifest.json" in done.stderr


@pytest.mark.parametrize(
    "path",
    [
        "python/sglang/srt/mem_cache/pool.py",
        "python/sglang/srt/layers/attention/triton/x.py",
        "python/sglang/launch_server.py",
        "sgl-kernel/python/sgl_kernel/ops/x.py",
        "sgl-kernel/python/sgl_kernel/x.py",
        "benchmark/x/y.py",
        "setup.py",
    ],
)
def test_pages_group_by_the_changelogs_subsystems(path: str) -> None:
    from extractor.datasets.diff import subsystem as changelog_subsystem
    from extractor.site import catalogue, versions

    # Looked up in the modules' namespaces: the name is imported there, not exported.
    site_subsystem = vars(catalogue)["subsystem"]
    assert site_subsystem is changelog_subsystem and vars(versions)["subsystem"] is changelog_subsystem
    assert site_subsystem(path) == changelog_subsystem(path)


def test_index_charts_the_count_of_every_subsystem(nightly: Path, site: Path) -> None:
    from collections import Counter

    from extractor.records.subsystem import subsystem

    counts = Counter(subsystem(str(r["filePath"])) for r in dataset_records(current_dataset(nightly)))
    html = (site / "index.html").read_text(encoding="utf-8")
    chart = html[html.index("<svg") : html.index("</svg>")]
    bars = dict(re.findall(r"<title>([^<:]+): (\d+)</title></rect>", chart))
    assert {name: int(n) for name, n in bars.items()} == dict(counts)
    for name in counts:
        assert f'<option value="{name}">' in html


def test_records_sharing_a_slug_each_get_a_page(nightly: Path) -> None:
    from extractor.records.jsonl import load_records
    from extractor.site.catalogue import build_catalogue

    first = load_records(current_dataset(nightly))[0]
    twin = first.model_copy(update={"id": "0123456789abcdef", "lineNumber": first.lineNumber})
    catalogue = build_catalogue([first, twin], dataset_version="v", source_name="x", versions=[])
    pages = [e.href for e in catalogue.entries]
    assert pages == [f"errors/{first.slug}-{first.id}.html", f"errors/{first.slug}-0123456789abcdef.html"]
