"""The typer app every command hangs on: the options every command shares, and exit codes.

Every command registered with :meth:`App.command` gets ``-q/--quiet``, ``-v/--verbose`` and
``--color`` without declaring them, and runs inside one error boundary, so every failure ends
with a ``where: what`` line and one of the documented exit codes:

* 0 success; 1 findings (bad lines, differences, no match); 2 trouble (bad input, a failure
  named as ``where: what``, an internal error); 3 another run holds the nightly folder's lock;
  130 interrupted (Ctrl-C).

No traceback reaches the user unless ``-v`` asks for it.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import traceback
import typing
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, TypeVar

import typer
import typer.core

from extractor import __version__
from extractor.errors import ExtractorError
from extractor.render.console import ColorMode, Streams

__all__ = ["EXIT_FINDINGS", "EXIT_LOCKED", "EXIT_OK", "EXIT_TROUBLE", "App", "app", "current", "fail"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_TROUBLE = 2
EXIT_LOCKED = 3
EXIT_INTERRUPTED = 130

F = TypeVar("F", bound=Callable[..., Any])

_streams: Streams | None = None


def current() -> Streams:
    """The streams of the command being run (defaults outside a command, e.g. in tests)."""
    global _streams
    if _streams is None:
        _streams = Streams.make()
    return _streams


def fail(exc: ExtractorError) -> NoReturn:
    """Print ``error: where: what`` on stderr and exit with the error's code."""
    from rich.markup import escape

    text = f"[bold red]error[/]: {escape(exc.where)}: {escape(exc.what)}"
    current().alert.print(text, markup=True, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


_QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only results and errors (no notes or progress).")
]
_VerboseOpt = Annotated[
    int,
    typer.Option(
        "--verbose", "-v", count=True, show_default=False, help="Print more detail; repeat for more."
    ),
]
_ColorOpt = Annotated[
    ColorMode,
    typer.Option(
        "--color",
        metavar="auto|always|never",
        case_sensitive=False,
        show_default=False,
        help="Colour output: auto (the default) follows the terminal and NO_COLOR.",
    ),
]
_COMMON: tuple[tuple[str, Any, Any], ...] = (
    ("quiet", _QuietOpt, False),
    ("verbose", _VerboseOpt, 0),
    ("color", _ColorOpt, ColorMode.auto),
)


def _with_common(func: F) -> F:
    """``func`` with the shared options appended to its signature and run in the error boundary."""
    hints = typing.get_type_hints(func, include_extras=True)
    signature = inspect.signature(func)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
    taken = {p.name for p in params}
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
        for name, kind, default in _COMMON
        if name not in taken
    ]

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        global _streams
        quiet = bool(kwargs.pop("quiet", False)) if "quiet" not in taken else bool(kwargs.get("quiet"))
        verbose = int(kwargs.pop("verbose", 0)) if "verbose" not in taken else int(kwargs.get("verbose") or 0)
        color = kwargs.pop("color", ColorMode.auto) if "color" not in taken else kwargs.get("color")
        _streams = Streams.make(color=ColorMode(color or ColorMode.auto), quiet=quiet, verbose=verbose)
        return guarded(func, *args, **kwargs)

    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*params, *extra], return_annotation=signature.return_annotation
    )
    run.__annotations__ = {**hints, **{name: kind for name, kind, _ in _COMMON if name not in taken}}
    return typing.cast(F, run)


def guarded(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``func`` so that every failure maps to a documented exit code with a ``where: what`` line."""
    streams = current()
    try:
        return func(*args, **kwargs)
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except ExtractorError as exc:
        fail(exc)
    except KeyboardInterrupt:
        # Printed after any progress bar has been cleared (the bar's context exits first).
        streams.alert.print("interrupted: nothing was written", markup=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:
        # The reader went away (`| head`): not a failure of ours. Stop writing to the dead pipe.
        with _suppress_all():
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(EXIT_OK) from None
    except OSError as exc:
        where = exc.filename if exc.filename is not None else "i/o"
        fail(ExtractorError(str(where), exc.strerror or str(exc)))
    except Exception as exc:
        if streams.verbose:
            streams.alert.print(traceback.format_exc(), markup=False, highlight=False, soft_wrap=True)
        hint = "" if streams.verbose else " (run with -v for the traceback)"
        fail(ExtractorError("internal error", f"{type(exc).__name__}: {exc}{hint}"))


class _suppress_all:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def _value_name(param: Any) -> Callable[..., str | None]:
    """Help shows a value name (``FILE``, ``N``), never a Python type (``<list[Path]>``)."""

    def display(ctx: Any = None) -> str | None:
        if getattr(param, "param_type_name", "") == "argument":
            return None  # the argument's own name or metavar already is the value name
        if param.metavar:
            return str(param.metavar)
        bare = getattr(param, "bare_type", None)
        kind = str(bare() if callable(bare) else getattr(getattr(param, "type", None), "name", "value"))
        kind = kind.lower().removeprefix("list[").removesuffix("]")
        return {"str": "TEXT", "text": "TEXT", "int": "N", "integer": "N", "float": "NUMBER"}.get(
            kind, kind.upper()
        )

    return display


class _Command(typer.core.TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if hasattr(param, "display_type_rich"):
                param.display_type_rich = _value_name(param)


class App(typer.Typer):
    """A :class:`typer.Typer` whose commands all carry the shared options and error boundary."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        kwargs.setdefault("cls", _Command)
        register = super().command(*args, **kwargs)

        def decorator(func: F) -> F:
            register(_with_common(func))
            return func

        return decorator


app = App(
    name="sglang-errors",
    help="Mine sglang's source for every error it can raise, as a schema-validated dataset.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    epilog="Exit codes: 0 success, 1 findings, 2 trouble, 3 nightly folder locked, 130 interrupted.",
)


def version_callback(value: bool) -> None:
    if value:
        print(f"sglang-errors {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=version_callback, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Mine sglang's source for every error it can raise.

    Exit codes: 0 success, 1 findings, 2 trouble, 3 nightly folder locked, 130 interrupted.
    """
