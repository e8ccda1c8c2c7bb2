"""One manifest reader: the nightly job and the catalogue refuse the same damaged manifests alike."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from extractor.datasets.manifest import MANIFEST_NAME, read_manifest
from extractor.errors import ExtractorError
from extractor.site.versions import read_nightly
from tests.conftest import invoke
from tests.gitrepos import make_repo

SHA = "0123456789abcdef0123456789abcdef01234567"
DATASET = "sglang-errors-0123456789ab-20260101T000000Z.jsonl"


def _manifest(**fields: object) -> bytes:
    return orjson.dumps({"manifestVersion": 1, "sha": SHA, "datasetFile": DATASET, **fields})


BAD = {
    "truncated": (b'{"manifestVersion": 1, "sha": "', "not valid JSON"),
    "a-list": (b"[]", "not a JSON object"),
    "newer-version": (_manifest(manifestVersion=2), "unsupported manifestVersion 2"),
    "short-sha": (_manifest(sha="0123abc"), "sha is not a full commit sha: '0123abc'"),
    "no-dataset": (orjson.dumps({"manifestVersion": 1, "sha": SHA}), "datasetFile missing"),
    "outside-path": (
        _manifest(datasetFile="../x.jsonl"),
        "names a file this job does not write: '../x.jsonl'",
    ),
    "foreign-changelog": (
        _manifest(history=[{"datasetFile": DATASET, "changelog": {"json": "notes.json"}}]),
        "names a file this job does not write: 'notes.json'",
    ),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "nightly"
    out.mkdir()
    (out / DATASET).write_bytes(b"")
    return out


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_manifest_is_the_same_file_what_error_for_the_job_and_the_catalogue(
    name: str, folder: Path, tmp_path: Path
) -> None:
    raw, what = BAD[name]
    path = folder / MANIFEST_NAME
    path.write_bytes(raw)
    with pytest.raises(ExtractorError) as by_reader:
        read_manifest(folder)
    with pytest.raises(ExtractorError) as by_site:
        read_nightly(folder)
    assert by_reader.value.where == by_site.value.where == str(path)
    assert what in by_reader.value.what and by_site.value.what == by_reader.value.what

    # Both commands say it as ``file: what``, exit 2, and leave the folder as it was (the job's
    # lock file aside).
    source, _ = make_repo(tmp_path, [{"python/sglang/srt/a.py": b"raise ValueError('boom')\n"}])
    before = sorted(p.name for p in folder.iterdir())
    job = invoke("nightly", "--source", source, "--out-dir", folder, "--cache-dir", tmp_path / "cache")
    site = invoke("site", folder, "--out", tmp_path / "site")
    for done in (job, site):
        assert done.exit_code == 2, done.output
        assert f"{path}: {what}" in done.stderr.replace("\n", "")
    assert path.read_bytes() == raw
    assert sorted(p.name for p in folder.iterdir() if p.name != ".lock") == before
    assert not (tmp_path / "site").exists()


def test_a_good_manifest_reads_the_same_for_both(folder: Path) -> None:
    (folder / MANIFEST_NAME).write_bytes(_manifest(datasetVersion="2026-01-01T00:00:00.000Z"))
    manifest = read_manifest(folder)
    assert manifest is not None and manifest["datasetFile"] == DATASET
    nightly = read_nightly(folder)
    assert nightly.current == folder / DATASET
    assert [v.dataset_file for v in nightly.versions] == [DATASET]
    assert read_manifest(folder / "absent") is None
