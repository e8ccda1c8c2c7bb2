"""Every default of the product in one place: the pinned target, its scope and where output goes."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_SOURCE = "https://github.com/sgl-project/sglang.git"
# The commit the reference record in shared/seed was analysed at.
DEFAULT_SHA = "0132848349585cfe6aae51c4941cbae872505f8a"
DEFAULT_REPO = "sgl-project/sglang"
SOURCE_ENV = "SGLANG_ERRORS_SOURCE"

DEFAULT_INCLUDE: tuple[str, ...] = ("python/sglang/**/*.py", "sgl-kernel/python/**/*.py")
DEFAULT_EXCLUDE: tuple[str, ...] = ("**/test/**", "**/tests/**")

DEFAULT_OUTPUT_DIR = "output"
SCHEMA_VERSION = 2
SCHEMA_PATH = "schemas/error-record.v2.schema.json"


@dataclass(frozen=True)
class Scope:
    """Which files of the target are analysed."""

    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    repo: str = DEFAULT_REPO

    def key(self) -> str:
        """A stable text form, part of every cache key."""
        return "|".join(["inc", *self.include, "exc", *self.exclude, "repo", self.repo])


@dataclass(frozen=True)
class RunConfig:
    """One extraction: where the target comes from and what of it is read."""

    source: str = DEFAULT_SOURCE
    sha: str = DEFAULT_SHA
    scope: Scope = field(default_factory=Scope)
