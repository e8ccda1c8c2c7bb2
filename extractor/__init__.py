"""sglang-errors: mine sglang's source for every error it can raise."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
