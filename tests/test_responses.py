"""Error responses the server returns (not raises) are sites too, with their type and status."""

from __future__ import annotations

import re
from pathlib import Path

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source

FIXTURE = Path(__file__).parent / "fixtures" / "core" / "serving.py"


def test_error_responses_become_sites() -> None:
    parsed = parse_source("python/sglang/srt/entrypoints/serving.py", FIXTURE.read_bytes())
    assert isinstance(parsed, ParsedFile)
    sites = analyse(parsed)
    got = [
        (s.line, s.kind, s.error_class, s.http_status, s.message.template if s.message else None)
        for s in sites
    ]
    assert got == [
        (8, "response", "BadRequestError", 400, "messages must not be empty"),
        (10, "response", "InvalidRequest", 422, "n must be at most 8, got {request.n}"),
        (18, "response", "BadRequestError", 400, "{str(e)}"),
        (22, "response", "StreamError", 500, "stream broke"),
    ]
    by_line = {s.line: s for s in sites}
    assert [a.text for a in by_line[10].guard.atoms] == ["not not request.messages", "request.n > 8"]
    assert [a.text for a in by_line[18].guard.atoms] == [
        "not not request.messages",
        "not request.n > 8",
        "except ValueError",
    ]
    assert by_line[10].message is not None
    assert re.fullmatch(by_line[10].message.pattern, "n must be at most 8, got 9")


def test_response_record_prose_speaks_of_the_response() -> None:
    from extractor.engine.pipeline import analyse_file
    from extractor.prose.knowledge import Knowledge
    from extractor.types import Parsed

    payload = analyse_file(
        "python/sglang/srt/entrypoints/serving.py",
        FIXTURE.read_bytes(),
        "sgl-project/sglang",
        Knowledge.empty(),
    )
    assert isinstance(payload, Parsed)
    first = payload.records[0]
    assert first["httpStatus"] == 400
    assert "error response" in first["documentation"]
    assert "resp.status_code == 400" in first["tryCatchPattern"]
