"""Where a target may come from: the source and commit-ish checks that run before git sees them.

A *source* is either a URL (``https://``, ``http://``, ``ssh://``, ``git://``, ``file://`` or
scp-like ``user@host:path``) or a local path to a git repository. Both the source and the
commit-ish are checked here *before* any git command or GitPython call sees them
(:func:`validate_source`, :func:`validate_commitish`): git's remote helpers (``ext::``, ``fd::``,
``<transport>::``), option-like values, control characters and environment-variable references
are refused, because each has been a way to run commands through ``git clone``/``git fetch`` or
through GitPython's URL handling (CVE-2022-24439, the option smuggling advisories up to GitPython
3.1.51, the env-var expansion of clone URLs).
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from extractor.errors import ExtractorError

__all__ = ["ALLOWED_SCHEMES", "GIT_NETWORK_ENV", "HEX40", "is_url", "validate_commitish", "validate_source"]

ALLOWED_SCHEMES: tuple[str, ...] = ("https", "http", "ssh", "git", "file")

# Every git process started for a clone or fetch gets these: never prompt for credentials (a
# missing repository on a forge would otherwise wait for a username), allow only the transports a
# source may name (git itself then refuses ext::/fd:: even if something slipped through), and give
# up on a transfer that has stalled instead of hanging forever.
GIT_NETWORK_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": ":".join(ALLOWED_SCHEMES),
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
    "GIT_HTTP_LOW_SPEED_TIME": "60",
}

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
# git picks a remote helper for "<transport>::<address>" when the prefix is made of URL-scheme
# characters (transport.c); "ext::" runs an arbitrary command, "fd::" talks over a descriptor.
_TRANSPORT_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like syntax: git treats "[user@]host:path" as ssh when the first ":" comes before any "/".
_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/:]*)@)?(?P<host>\[[^\]/]*\]|[^@/:\[\]]*):(?P<path>.*)$", re.DOTALL)
# "%NAME%" is how Windows spells a variable; "%2F"-style percent-escapes are left alone.
_PERCENT_VAR = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%")
_PERCENT_ESCAPE = re.compile(r"^[0-9A-Fa-f]{2}$")
HEX40 = re.compile(r"^[0-9a-f]{40}$")
# A commit-ish is a hex id or a ref name, optionally followed by ~N / ^N steps. Nothing else
# (ranges, ":path", "@{...}", "^{...}", options) reaches git.
_COMMITISH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]*(?:[~^][0-9]{0,6})*$")
_MAX_COMMITISH = 256


def _refuse(value: str, why: str) -> ExtractorError:
    return ExtractorError(repr(value) if _CONTROL_CHARS.search(value) else value, why)


def is_url(source: str) -> bool:
    """Whether a (valid) source names a remote to clone rather than a local repository path."""
    if _SCHEME.match(source):
        return True
    scp = _SCP_LIKE.match(source)
    # As in git: "host:path" is ssh only if the ":" comes before any "/"; "./a:b" is a path.
    return scp is not None and bool(scp.group("host"))


def _check_env_references(source: str) -> None:
    if "$" in source:
        raise _refuse(source, "environment-variable references ('$') are not allowed in a source")
    for m in _PERCENT_VAR.finditer(source):
        if not _PERCENT_ESCAPE.match(m.group(1)):
            raise _refuse(
                source, f"environment-variable references ('%{m.group(1)}%') are not allowed in a source"
            )


def _check_url(source: str, parts: SplitResult) -> None:
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise _refuse(source, f"unsupported URL scheme {scheme!r} (use one of {', '.join(ALLOWED_SCHEMES)})")
    if any(ch.isspace() for ch in source):
        raise _refuse(source, "a URL cannot contain whitespace (percent-encode it)")
    for m in re.finditer(r"%(.{0,2})", source):
        if not _PERCENT_ESCAPE.match(m.group(1)):
            raise _refuse(source, "a '%' in a URL must start a percent-escape such as %20")
    try:
        host = parts.hostname
        username = parts.username
        _ = parts.port  # raises ValueError for a non-numeric port
    except ValueError as exc:
        raise _refuse(source, f"malformed URL: {exc}") from None
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise _refuse(source, "a file:// URL names a local path: file:///absolute/path")
        if not parts.path.startswith("/"):
            raise _refuse(source, "a file:// URL needs an absolute path: file:///absolute/path")
        return
    if not host:
        raise _refuse(source, "the URL has no host")
    # ssh would read "-oProxyCommand=..." as an option; git refuses it too, we refuse it first.
    if host.startswith("-") or (username or "").startswith("-"):
        raise _refuse(source, "a host or user name cannot start with '-'")
    if not parts.path.strip("/"):
        raise _refuse(source, "the URL names no repository path")


def _check_scp(source: str, m: re.Match[str]) -> None:
    user, host, path = m.group("user") or "", m.group("host"), m.group("path")
    if any(ch.isspace() for ch in source):
        raise _refuse(source, "an scp-like URL cannot contain whitespace")
    if user.startswith("-") or host.startswith("-"):
        raise _refuse(source, "a host or user name cannot start with '-'")
    if not path.strip("/") or path.startswith("-"):
        raise _refuse(source, "an scp-like URL needs a repository path after ':' (user@host:owner/repo.git)")


def validate_source(source: str) -> None:
    """Refuse any source that is not a plain URL of an allowed scheme or a plain local path.

    Raises :class:`ExtractorError` (``where`` = the source) for: an empty value, control
    characters (NUL, newline, ...), a leading ``-`` (git would read an option such as
    ``--upload-pack=...``), git's remote-helper syntax ``<transport>::`` (``ext::``, ``fd::``),
    ``$``/``${...}``/``%VAR%`` environment-variable references, unknown URL schemes, and URLs
    whose host or user starts with ``-``. Local paths are not checked for existence here.
    """
    if not isinstance(source, str) or not source:
        raise ExtractorError(repr(source), "empty source: give a git URL or the path of a local repository")
    if _CONTROL_CHARS.search(source):
        raise _refuse(source, "control characters (NUL, newline, ...) are not allowed in a source")
    if source.startswith("-"):
        raise _refuse(source, "a source cannot start with '-' (it would be read as a git option)")
    if _TRANSPORT_PREFIX.match(source) or "::" in re.sub(r"\[[^\]]*\]", "", source):
        raise _refuse(source, "git remote-helper syntax '<transport>::' (ext::, fd::, ...) is not allowed")
    _check_env_references(source)
    if _SCHEME.match(source):
        _check_url(source, urlsplit(source))
        return
    scp = _SCP_LIKE.match(source)
    if scp is not None and scp.group("host"):
        if "@" not in source and scp.group("host").lower() in ALLOWED_SCHEMES:
            # "https:host/x" would go to an ssh host called "https": a mistyped URL, not a host.
            raise _refuse(source, "malformed URL: expected scheme://host/path")
        _check_scp(source, scp)


def validate_commitish(value: str) -> None:
    """Refuse anything but a hex id or a ref name with optional ``~N``/``^N`` steps.

    Raises :class:`ExtractorError` (``where`` = the value) for option-like values (``-x``,
    ``--output=...``), whitespace or control characters, ranges (``a..b``), ``rev:path``,
    reflog/peel syntax (``@{...}``, ``^{...}``) and malformed ref names.
    """
    if not isinstance(value, str) or not value:
        raise ExtractorError(repr(value), "empty commit-ish: give a sha, tag, branch or e.g. HEAD~1")
    if _CONTROL_CHARS.search(value) or any(ch.isspace() for ch in value):
        raise _refuse(value, "a commit-ish cannot contain whitespace or control characters")
    if value.startswith("-"):
        raise _refuse(value, "a commit-ish cannot start with '-' (it would be read as a git option)")
    if len(value) > _MAX_COMMITISH:
        raise _refuse(value[:40] + "...", f"a commit-ish is at most {_MAX_COMMITISH} characters")
    if ".." in value:
        raise _refuse(value, "revision ranges ('..') are not accepted: give one commit")
    if ":" in value:
        raise _refuse(value, "'rev:path' syntax is not accepted: give one commit")
    if "@{" in value or "{" in value or "}" in value:
        raise _refuse(value, "reflog and peel syntax ('@{...}', '^{...}') are not accepted")
    if not _COMMITISH.match(value):
        raise _refuse(
            value, "not a commit-ish: expected a hex sha, a tag or branch name, optionally with ~N or ^N"
        )
    name = re.split(r"[~^]", value, maxsplit=1)[0]
    if "//" in name or "/." in name or name.endswith(("/", ".", ".lock")):
        raise _refuse(value, "not a valid ref name")
