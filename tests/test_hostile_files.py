"""Hostile target files: every one is either analysed or reported by name and reason, never a crash.

One real git repository holds a file of each hostile kind beside ordinary ones; the real CLI
extracts it (in worker processes) and the library API extracts it again (in process). Every
parseable site must come out with the right line and source window, every unparseable file must
be named with why in the run summary, and symlinks are never followed. Shapes too slow or too
many for a repository (deep nesting variants) go straight through :func:`analyse_file`.
"""

from __future__ import annotations

import functools
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from extractor.api import ExtractOptions, ExtractResult, extract
from extractor.engine.pipeline import analyse_file
from extractor.prose.knowledge import Knowledge
from extractor.reasons import Reason
from extractor.types import Failed, Parsed
from tests.conftest import run_cli
from tests.gitrepos import Content, Symlink, make_repo

PKG = "python/sglang/hostile"
LINE_BREAK = re.compile(r"\r\n|\r|\n")

# One ordinary module, written three ways below (LF, CRLF, lone CR): same sites, same windows.
ORDINARY = b"""import os

LIMIT = 8


def check(x, name):
    # Negative sizes come from a bad config.
    if x < 0:
        raise ValueError(
            "negative %s: %d" % (name, x)
        )
    assert x != LIMIT, f"{name} hit the limit {LIMIT}"
    return x
"""
ORDINARY_SITES = [(9, "negative {name}: {x}"), (12, "{name} hit the limit {LIMIT}")]

BIG_LINES = 50_000


def big_generated() -> bytes:
    """~50,000 lines: a generated table, then functions with sites, the last one at the very end."""
    rows = (
        [b"TABLE = [\n"] + [b"    (%d, 'row%d')," % (i, i) + b"\n" for i in range(BIG_LINES - 700)] + [b"]\n"]
    )
    funcs = [
        b"\n\ndef lookup_%d(key):\n    if key not in INDEX:\n        raise KeyError(f'row %d: {key}')\n    return key\n"
        % (i, i)
        for i in range(100)
    ]
    return b"".join(rows + funcs)


DEEP_BLOCKS = 95  # CPython allows 100 levels of indentation


def deep_blocks() -> bytes:
    kinds = ["if a:", "for b in c:", "while d:", "with e:", "try:"]
    out = []
    for depth in range(DEEP_BLOCKS):
        kind = kinds[depth % len(kinds)]
        out.append(" " * depth + kind)
    out.append(" " * DEEP_BLOCKS + "raise RuntimeError('bottom of the stack')")
    for depth in range(DEEP_BLOCKS - 1, -1, -1):
        if kinds[depth % len(kinds)] == "try:":
            out.append(" " * depth + "except OSError:")
            out.append(" " * depth + " pass")
    return ("\n".join(out) + "\n").encode()


LONG = 300_000

FILES: dict[str, Content] = {
    f"{PKG}/ordinary.py": ORDINARY,
    f"{PKG}/crlf.py": ORDINARY.replace(b"\n", b"\r\n"),
    f"{PKG}/lone_cr.py": ORDINARY.replace(b"\n", b"\r"),
    f"{PKG}/bom.py": b"\xef\xbb\xbf" + ORDINARY,
    f"{PKG}/form_feed.py": b"\x0c\nimport os\n\x0c\n\ndef f(x):\n    if x:  # \x0c\n        raise OSError('after form feeds')\n",
    f"{PKG}/tabs.py": b"def f(x):\n\tif x:\n\t\traise ValueError('tab\\tindented')\n\tassert x, 'tabs'\n",
    f"{PKG}/latin1_cookie.py": (
        "# -*- coding: latin-1 -*-\n\ndef f(x):\n    if x:\n        raise ValueError('caf\u00e9 ferm\u00e9: %s' % x)\n"
    ).encode("latin-1"),
    f"{PKG}/unicode.py": (
        "def gr\u00f6\u00dfe(wert):\n    if wert < 0:\n"
        "        raise ValueError(f'Gr\u00f6\u00dfe {wert} ist negativ \u2717 \u65e5\u672c\u8a9e \U0001f600')\n"
    ).encode(),
    f"{PKG}/with space/my module.py": b"def f():\n    raise LookupError('found in a path with spaces')\n",
    f"{PKG}/empty.py": b"",
    f"{PKG}/comments_only.py": b"# nothing here\n\n",
    f"{PKG}/big_generated.py": big_generated(),
    f"{PKG}/deep_blocks.py": deep_blocks(),
    f"{PKG}/long_message.py": b"def f():\n    raise ValueError('" + b"x" * LONG + b"')\n",
    f"{PKG}/long_fstring.py": b"def f(n):\n    raise ValueError(f'{n} ' + '" + b"y" * LONG + b"')\n",
    f"{PKG}/newer_syntax.py": b"type Alias = int\n\n\ndef first[T](xs: list[T]) -> T:\n    raise IndexError('empty')\n",
    f"{PKG}/py311_ok.py": (
        b"def f(cmd):\n    match cmd:\n        case {'op': op}:\n            raise ValueError(f'bad op {op}')\n"
        b"    try:\n        pass\n    except* OSError:\n        raise RuntimeError('group')\n"
    ),
    # unparseable
    f"{PKG}/syntax_error.py": b"def broken(:\n    raise ValueError('never seen')\n",
    f"{PKG}/python2.py": b"print 'hello'\n\ndef f(x):\n    raise ValueError, 'old style'\n",
    f"{PKG}/no_cookie_latin1.py": b"def f():\n    raise ValueError('caf\xe9')\n",
    f"{PKG}/bad_cookie.py": b"# coding: klingon\nraise ValueError('x')\n",
    f"{PKG}/transform_cookie.py": b"# coding: rot13\nenvfr InyhrReebe('k')\n",
    f"{PKG}/nul_bytes.py": b"x = 1\nraise ValueError('a')\x00\n",
    f"{PKG}/binary.py": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    f"{PKG}/binary_no_nul.py": bytes(range(0x80, 0x100)) * 4,
    f"{PKG}/deep_parser.py": b"x = " + b"-" * 100_000 + b"1\nraise ValueError('after')\n",
    f"{PKG}/deep_parens.py": b"x = " + b"(" * 250 + b"1" + b")" * 250 + b"\n",
    # symlinks: blobs holding a path, never followed
    f"{PKG}/link_outside.py": Symlink("/etc/passwd"),
    f"{PKG}/link_up.py": Symlink("../../../../outside/secret.py"),
    f"{PKG}/link_inside.py": Symlink("ordinary.py"),
    f"{PKG}/link_dir.py": Symlink("/etc"),
    "outside/secret.py": b"raise ValueError('outside the scope, reached only by following a link')\n",
}

NEWER_THAN_RUNNING = sys.version_info < (3, 12)

# path -> the reason code its failure (or skip) must carry
FAILURES: dict[str, Reason] = {
    f"{PKG}/syntax_error.py": Reason.SYNTAX_ERROR,
    f"{PKG}/python2.py": Reason.SYNTAX_ERROR,
    f"{PKG}/no_cookie_latin1.py": Reason.UNDECODABLE,
    f"{PKG}/bad_cookie.py": Reason.UNDECODABLE,
    f"{PKG}/transform_cookie.py": Reason.UNDECODABLE,
    f"{PKG}/nul_bytes.py": Reason.NUL_BYTE,
    f"{PKG}/binary.py": Reason.NUL_BYTE,
    f"{PKG}/binary_no_nul.py": Reason.UNDECODABLE,
    f"{PKG}/deep_parser.py": Reason.TOO_DEEP,
    f"{PKG}/deep_parens.py": Reason.SYNTAX_ERROR,
    f"{PKG}/link_outside.py": Reason.SYMLINK,
    f"{PKG}/link_up.py": Reason.SYMLINK,
    f"{PKG}/link_inside.py": Reason.SYMLINK,
    f"{PKG}/link_dir.py": Reason.SYMLINK,
}
if NEWER_THAN_RUNNING:
    FAILURES[f"{PKG}/newer_syntax.py"] = Reason.SYNTAX_ERROR

# path -> [(line, errorMessage)] of every site it must give
SITES: dict[str, list[tuple[int, str]]] = {
    f"{PKG}/ordinary.py": ORDINARY_SITES,
    f"{PKG}/crlf.py": ORDINARY_SITES,
    f"{PKG}/lone_cr.py": ORDINARY_SITES,
    f"{PKG}/bom.py": ORDINARY_SITES,
    f"{PKG}/form_feed.py": [(7, "after form feeds")],
    f"{PKG}/tabs.py": [(3, "tab\tindented"), (4, "tabs")],
    f"{PKG}/latin1_cookie.py": [(5, "caf\u00e9 ferm\u00e9: {x}")],
    f"{PKG}/unicode.py": [(3, "Gr\u00f6\u00dfe {wert} ist negativ \u2717 \u65e5\u672c\u8a9e \U0001f600")],
    f"{PKG}/with space/my module.py": [(2, "found in a path with spaces")],
    f"{PKG}/big_generated.py": [(BIG_LINES - 700 + 2 + 6 * i + 5, f"row {i}: {{key}}") for i in range(100)],
    f"{PKG}/deep_blocks.py": [(DEEP_BLOCKS + 1, "bottom of the stack")],
    f"{PKG}/long_message.py": [(2, "x" * LONG)],
    f"{PKG}/long_fstring.py": [(2, "{n} " + "y" * LONG)],
    f"{PKG}/py311_ok.py": [(4, "bad op {op}"), (8, "group")],
}
if not NEWER_THAN_RUNNING:
    SITES[f"{PKG}/newer_syntax.py"] = [(5, "empty")]


@dataclass
class Run:
    records: list[dict[str, object]]
    failures: dict[str, str]
    stderr: str


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root, _ = make_repo(tmp_path_factory.mktemp("hostile"), [FILES])
    return root


@pytest.fixture(scope="module")
def cli_run(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The real CLI with two worker processes."""
    tmp = tmp_path_factory.mktemp("cli")
    out = tmp / "out.jsonl"
    proc = run_cli(
        "extract", "--source", str(repo), "--sha", "HEAD", "--out", str(out),
        "--cache-dir", str(tmp / "cache"), "--jobs", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    records = [orjson.loads(line)["record"] for line in out.read_bytes().splitlines()]
    failures = {}
    for line in proc.stderr.splitlines():
        # The summary lists "  <path>: <reason>" per failed or skipped file.
        for path in FILES:
            if line.startswith(f"  {path}: "):
                failures[path] = line[len(path) + 4 :]
    return Run(records, failures, proc.stderr)


@pytest.fixture(scope="module")
def api_run(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> ExtractResult:
    """The library API in this process (no pool, no cache)."""
    options = ExtractOptions.build(
        source=str(repo), sha="HEAD", jobs=1, cache_dir=tmp_path_factory.mktemp("api-cache"), use_cache=False
    )
    return extract(options)


def sites_of(records: list[dict[str, object]]) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for r in records:
        out.setdefault(str(r["filePath"]), []).append((int(str(r["lineNumber"])), str(r["errorMessage"])))
    return {path: sorted(found) for path, found in out.items()}


def test_every_parseable_site_is_extracted(cli_run: Run) -> None:
    assert sites_of(cli_run.records) == {path: sorted(found) for path, found in SITES.items()}


def test_every_unparseable_file_is_named_with_its_reason(cli_run: Run, api_run: ExtractResult) -> None:
    assert set(cli_run.failures) == set(FAILURES), cli_run.stderr
    assert all(cli_run.failures.values()), cli_run.failures  # each with its reason in words
    codes = {f.path: f.code for f in api_run.stats.failures if f.path in FILES}
    assert codes == FAILURES
    counted = re.search(r"files failed or skipped\W+(\d+)", cli_run.stderr)
    assert counted is not None and int(counted.group(1)) == len(FAILURES), cli_run.stderr


def test_library_run_reports_the_same(api_run: ExtractResult, cli_run: Run) -> None:
    records = [r.model_dump(mode="json") for r in api_run.records]
    assert sites_of(records) == sites_of(cli_run.records)
    reported = {f.path: f.reason for f in api_run.stats.failures}
    assert {p: r for p, r in reported.items() if p in FILES} == cli_run.failures
    assert api_run.stats.records == len(cli_run.records)


@functools.cache
def _expected_lines(data: bytes) -> list[str]:
    """The file's lines as Python reads them: BOM, coding cookie, and \\r\\n, \\r or \\n breaks."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return LINE_BREAK.split(data.decode(encoding).removeprefix("\ufeff"))


def test_source_windows_are_the_files_own_lines(cli_run: Run) -> None:
    """Line numbers and sourceCode windows are right whatever the line endings and encoding."""
    for r in cli_run.records:
        content = FILES[str(r["filePath"])]
        assert isinstance(content, bytes)
        lines = _expected_lines(content)
        start, end, line = (
            int(str(r["sourceCodeStart"])),
            int(str(r["sourceCodeEnd"])),
            int(str(r["lineNumber"])),
        )
        assert r["sourceCode"] == "\n".join(lines[start - 1 : end]), r["filePath"]
        assert re.search(r"\b(raise|assert)\b", lines[line - 1]), (r["filePath"], line)
        assert "\r" not in str(r["sourceCode"])


def test_line_endings_and_bom_change_nothing_but_the_path(cli_run: Run) -> None:
    keep = ("lineNumber", "sourceCode", "sourceCodeStart", "sourceCodeEnd", "errorMessage", "messagePattern")
    by_path = {
        path: [{k: r[k] for k in keep} for r in cli_run.records if r["filePath"] == path]
        for path in (f"{PKG}/ordinary.py", f"{PKG}/crlf.py", f"{PKG}/lone_cr.py", f"{PKG}/bom.py")
    }
    reference = by_path.pop(f"{PKG}/ordinary.py")
    assert len(reference) == 2
    for path, found in by_path.items():
        assert found == reference, path


def test_patterns_match_the_runtime_text(cli_run: Run) -> None:
    by_line = {
        (r["filePath"], r["lineNumber"]): re.compile(str(r["messagePattern"])) for r in cli_run.records
    }
    rendered = {
        (f"{PKG}/latin1_cookie.py", 5): "caf\u00e9 ferm\u00e9: 3",
        (f"{PKG}/unicode.py", 3): "Gr\u00f6\u00dfe -1 ist negativ \u2717 \u65e5\u672c\u8a9e \U0001f600",
        (f"{PKG}/tabs.py", 3): "tab\tindented",
        (f"{PKG}/long_message.py", 2): "x" * LONG,
        (f"{PKG}/long_fstring.py", 2): "7 " + "y" * LONG,
        (f"{PKG}/big_generated.py", BIG_LINES - 700 + 2 + 6 * 99 + 5): "'row 99: missing'",
    }
    for key, text in rendered.items():
        assert by_line[key].fullmatch(text), (key, by_line[key].pattern[:200])


def test_symlinks_are_never_followed(cli_run: Run) -> None:
    paths = {r["filePath"] for r in cli_run.records}
    assert not any("link" in str(p) for p in paths)
    assert "outside/secret.py" not in paths
    assert not any("outside the scope" in str(r["errorMessage"]) for r in cli_run.records)
    assert not any("root:" in str(r["sourceCode"]) for r in cli_run.records)  # /etc/passwd's text
    assert f"{PKG}/link_dir.py: skipped: symlink" in cli_run.stderr


def test_validate_accepts_the_dataset_of_a_hostile_repository(cli_run: Run, tmp_path: Path) -> None:
    out = tmp_path / "again.jsonl"
    out.write_bytes(
        b"".join(
            orjson.dumps({"record": r, "datasetVersion": "2026-01-01T00:00:00.000Z"}) + b"\n"
            for r in cli_run.records
        )
    )
    proc = run_cli("validate", str(out))
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- nesting, in process

GOOD = b"\n\ndef still_here():\n    raise KeyError('the other site')\n"


def _deep(kind: str, n: int) -> bytes:
    shapes = {
        "guard_not": b"def f(x):\n    if " + b"not " * n + b"x:\n        raise ValueError('deep guard')\n",
        "guard_and": b"def f(x, y):\n    if x" + b" and y" * n + b":\n        raise ValueError('long and')\n",
        "message_add": b"def f():\n    raise ValueError('a' " + b"+ 'b' " * n + b")\n",
        "message_attr": b"def f(a):\n    raise ValueError(a" + b".b" * n + b")\n",
        "message_call": b"def f(g):\n    raise ValueError(g" + b"()" * n + b")\n",
        "fstring_attr": b"def f(a):\n    raise ValueError(f'{a" + b".b" * n + b"}')\n",
        "elif_chain": b"def f(a):\n    if a == 0:\n        pass\n"
        + b"".join(b"    elif a == %d:\n        pass\n" % i for i in range(1, n))
        + b"    else:\n        raise ValueError('no branch')\n",
        "nested_defs": b"".join(b" " * i + b"def f%d():\n" % i for i in range(min(n, 98)))
        + b" " * min(n, 98)
        + b"raise ValueError('innermost')\n",
        "nested_lists": b"def f():\n    raise ValueError(" + b"[" * 190 + b"]" * 190 + b")\n",
    }
    return shapes[kind] + GOOD


# Deep enough to overflow the default recursion limit: the repository run does it in a worker.
FILES[f"{PKG}/deep_guard.py"] = _deep("guard_not", 1500)
SITES[f"{PKG}/deep_guard.py"] = [(3, "deep guard"), (7, "the other site")]


@pytest.mark.parametrize("n", [200, 1000, 2900])
@pytest.mark.parametrize(
    "kind",
    [
        "guard_not",
        "guard_and",
        "message_add",
        "message_attr",
        "message_call",
        "elif_chain",
        "nested_defs",
        "nested_lists",
    ],
)
def test_deep_nesting_keeps_every_site(kind: str, n: int) -> None:
    """Anything CPython's parser accepts is analysed, however deep: the walkers' recursion overflows
    the default limit near 1,000 levels and the analysis is redone on a larger stack."""
    limit = sys.getrecursionlimit()
    payload = analyse_file(f"{kind}.py", _deep(kind, n), "o/r", Knowledge.empty())
    assert isinstance(payload, Parsed), payload
    assert payload.sites == 2
    assert "the other site" in [r["errorMessage"] for r in payload.records]
    assert sys.getrecursionlimit() == limit
    orjson.dumps(payload.to_plain())  # what a worker sends back must always serialise


def test_deep_fstring_keeps_every_site() -> None:
    # LibCST re-parses f-strings; its code generator recurses on this shape past the default limit.
    payload = analyse_file("f.py", _deep("fstring_attr", 1000), "o/r", Knowledge.empty())
    assert isinstance(payload, Parsed), payload
    assert payload.sites == 2


def test_nesting_the_parser_accepts_only_with_a_higher_limit() -> None:
    # Past ~3,000 levels the tree building needs more than the default recursion limit.
    payload = analyse_file("p.py", b"x = " + b"not " * 5_000 + b"1\n" + GOOD, "o/r", Knowledge.empty())
    assert isinstance(payload, Parsed), payload
    assert payload.sites == 1


def test_nesting_past_the_parser_is_a_failure_naming_it() -> None:
    # CPython's parser stops at 6,000 levels whatever the recursion limit (a MemoryError).
    for data in (b"x = " + b"-" * 100_000 + b"1\n" + GOOD, b"x = " + b"not " * 7_000 + b"1\n" + GOOD):
        payload = analyse_file("p.py", data, "o/r", Knowledge.empty())
        assert isinstance(payload, Failed) and payload.reason is Reason.TOO_DEEP, payload


SURROGATE = b"raise ValueError('\\ud800 lone surrogate')\n" + GOOD
SURROGATE_FSTRING = b"def f(x):\n    raise ValueError(f'{x} \\udfff')\n" + GOOD


@pytest.mark.parametrize(
    ("data", "message", "runtime"),
    [
        (SURROGATE, "\\ud800 lone surrogate", "\ud800 lone surrogate"),
        (SURROGATE_FSTRING, "{x} \\udfff", "7 \udfff"),
        (
            b"def f(x):\n    assert x, b'\\xff\\x00 bytes'\n" + GOOD,
            "b'\\xff\\x00 bytes'",
            "b'\\xff\\x00 bytes'",
        ),
        (b"raise ValueError('nul \\x00 inside')\n" + GOOD, "nul \x00 inside", "nul \x00 inside"),
    ],
    ids=["surrogate", "surrogate-fstring", "bytes", "escaped-nul"],
)
def test_odd_string_values_are_kept_and_serialise(data: bytes, message: str, runtime: str) -> None:
    """A lone surrogate or a NUL in a message is kept (as escape text) and never stops a worker."""
    payload = analyse_file("odd.py", data, "o/r", Knowledge.empty())
    assert isinstance(payload, Parsed), payload
    by_message = {r["errorMessage"]: r for r in payload.records}
    assert set(by_message) == {message, "the other site"}
    assert re.fullmatch(by_message[message]["messagePattern"], runtime)
    decoded = orjson.loads(orjson.dumps(payload.to_plain()))
    assert {r["errorMessage"] for r in decoded["records"]} == set(by_message)


def test_permalinks_percent_encode_odd_paths(cli_run: Run) -> None:
    """A space (or ``#``/``?``) in a path would break the URL; the path part is percent-encoded."""
    (rec,) = [r for r in cli_run.records if str(r["filePath"]).endswith("my module.py")]
    url = str(rec["githubUrl"])
    assert " " not in url
    assert url.endswith(f"/with%20space/my%20module.py#L{rec['sourceCodeStart']}-L{rec['sourceCodeEnd']}")
