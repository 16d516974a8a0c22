"""The ``locsynth`` command itself: the app, its own options, the order its commands are listed in,
and ``main``. The commands live in one module per group beside this one; cli/__init__.py gathers
them.

Each command imports what it uses when it runs, so ``locsynth --help`` loads typer alone and a
command pays only for its own imports (benchmarks/bench_cli.py measures this).
"""

from __future__ import annotations

import os
import sys

import typer
from typer.core import TyperGroup

def _click_habits() -> None:
    """typer 0.29 writes a flag's type as ``<bool>`` and a required argument as ``{name}`` in the usage
    line; click's tools, and this command's docs, write no type for a flag and NAME for an argument.
    A typer without these hooks is left as it is."""
    from typer import core

    option, argument = getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)
    if option is not None and hasattr(option, "display_type_rich"):
        shown = option.display_type_rich
        option.display_type_rich = lambda self, ctx: None if getattr(self, "is_flag", False) else shown(self, ctx)
    if argument is not None and hasattr(argument, "_usage_display_name"):
        def usage(self) -> str:
            name = self.display_name_raw.upper() if self.metavar is None else self.display_name_raw
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")
        argument._usage_display_name = usage


_click_habits()

#: the commands as ``locsynth --help`` lists them, in the order of the data path
COMMANDS = ("prepare", "info", "export", "simulate", "methods", "fit", "sample", "pdtest", "anonymize", "evaluate",
            "release", "compare", "lbs", "benchmark", "demo", "contest")


class _Listed(TyperGroup):
    """The root group: its commands in :data:`COMMANDS` order (one not listed there goes last)."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(super().list_commands(ctx), key=lambda n: COMMANDS.index(n) if n in COMMANDS else len(COMMANDS))


app = typer.Typer(cls=_Listed, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Synthesize privacy-preserving location traces and measure their utility and privacy.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"locsynth {version('locsynth')}")
        raise typer.Exit()


@app.callback()
def _options(quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or progress lines."),
             version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")):
    """Synthesize privacy-preserving location traces and measure their utility and privacy."""
    from . import common

    common.QUIET = quiet


def main() -> None:  # pragma: no cover
    """The ``locsynth`` script: the app, then an exit that skips the interpreter's teardown.

    Every command has closed its files and clusters by the time it returns; what is left is
    Python unloading numba, pandas, matplotlib and POT module by module, which took 0.3-0.8 s
    (benchmarks/bench_cli.py). An uncaught exception still ends the normal way, with its traceback.
    POT is imported without its torch backend (1.5 s of its 3.3 s import): locsynth gives it numpy
    arrays only, and DPTrip imports torch itself.
    """
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    try:
        app(prog_name="locsynth")
        code = 0
    except SystemExit as exc:
        code = exc.code
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
