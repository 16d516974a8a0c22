"""What the ``locsynth`` command modules share: printing and tables, one-line errors, progress
display, and options read from what the library declares (a metric group's options, a method's
hyperparameters, fit and sample options)."""

from __future__ import annotations

import contextlib
import functools
import inspect
from pathlib import Path
from typing import Optional

import typer

from ..core.errors import InputError


@functools.lru_cache(maxsize=None)
def _console(stderr: bool):
    from rich.console import Console

    return Console(stderr=stderr)


def console(stderr: bool = False):
    """The rich console the commands print on (stderr for progress and errors)."""
    return _console(stderr)


def say(text: str) -> None:
    _console(False).print(text, highlight=False, soft_wrap=True, markup=False)


def reports_errors(fn):
    """Bad input: one line on stderr, exit code 1 (click keeps 2 for its usage errors), no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            from rich.markup import escape

            _console(True).print(f"[red]error:[/red] {escape(as_flags(str(exc)))}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None
        except OSError as exc:
            from ..core.files import WRITE_ERRORS

            if exc.errno not in WRITE_ERRORS:
                raise
            # a full or read-only disk met outside an output's own writer (a benchmark's run, a lock)
            where = f" {exc.filename}" if exc.filename else ""
            _console(True).print(f"[red]error:[/red] cannot write{where}: {exc.strerror}", highlight=False,
                                 soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper


def _click(module: str):
    """click's ``module``: typer's own copy since typer 0.23 vendored it, else click itself."""
    import importlib

    try:
        return importlib.import_module(f"typer._click.{module}")
    except ImportError:
        return importlib.import_module(f"click.{module}")


def as_flags(message: str) -> str:
    """A library error as the command line says it: the library names a parameter in backquotes
    (`` `dp_epsilon` ``), the running command's option of that name becomes its flag
    (``--dp-epsilon``) and any other name loses its quotes."""
    import re

    ctx = _click("globals").get_current_context(silent=True)
    flags = {}
    if ctx is not None:
        for param in ctx.command.get_params(ctx):
            longs = [o for o in param.opts if o.startswith("--")]
            if param.name and longs:
                flags[param.name] = longs[0]
    return re.sub(r"`([A-Za-z_][A-Za-z0-9_]*)`", lambda m: flags.get(m.group(1), m.group(1)), message)


#: set by ``locsynth --quiet``: no progress bars, spinners or progress lines
QUIET = False
#: at most one plain progress line per task in this many seconds (tqdm's mininterval for files)
LINE_EVERY = 10.0
#: and at least one in this many while a task runs, even when it reports nothing new
HEARTBEAT = 60.0


class _NoBar:
    """What progress_bar gives with --quiet: nothing drawn, nothing imported."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *args, **kwargs):
        return 0

    def update(self, *args, **kwargs):
        pass


class _Background(_NoBar):
    """A daemon thread running ``self._run`` (until ``self.stop`` is set) inside ``with``."""

    def __init__(self):
        import threading

        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        return False


class _Lines(_Background):
    """Progress as plain lines on stdout, for output that is not a terminal (a log file, a notebook,
    CI): at most one line per task every :data:`LINE_EVERY` seconds, with the step, done/total,
    elapsed time and an estimate of what is left, as tqdm writes to files; and, inside ``with``, a
    line every :data:`HEARTBEAT` seconds for a task that is still running but silent (one long
    step of a long job)."""

    def __init__(self, every: float | None = None, heartbeat: float | None = None):
        super().__init__()
        self.every = LINE_EVERY if every is None else every
        self.heartbeat = HEARTBEAT if heartbeat is None else heartbeat
        self.tasks: list[dict] = []

    def _run(self):
        import time

        while not self.stop.wait(min(self.heartbeat, self.every)):
            now = time.monotonic()
            for t in list(self.tasks):
                running = not t["total"] or t["completed"] < t["total"]
                if running and now - t["last"] >= self.heartbeat:
                    t["last"] = now
                    say(self.line(t, now))

    def add_task(self, description: str = "", total=None, **kwargs) -> int:
        import time

        now = time.monotonic()
        self.tasks.append({"description": description, "base": description, "total": total, "completed": 0,
                           "start": now, "last": now})
        return len(self.tasks) - 1

    def update(self, task: int, *, completed=None, total=None, description=None, advance=None, **kwargs):
        import time

        t = self.tasks[task]
        now = time.monotonic()
        done = completed if completed is not None else t["completed"] + (advance or 0)
        if _new_step(t["description"], description, t["base"]):
            t["total"] = total                 # None: this step's length is unknown, not the last one's
            t["start"] = now
            t["base"] = description
            t.pop("first", None)
        elif done < t["completed"] or (None not in (total, t["total"]) and total != t["total"]):
            t["start"] = now                   # a new phase under the same name
            t.pop("first", None)
        t["description"] = t["description"] if description is None else description
        t["total"] = total if total is not None else t["total"]
        if done > 0 and "first" not in t:
            t["first"], t["first_done"] = now, done     # the rate is measured from here on
        t["completed"] = done
        if now - t["last"] >= self.every:
            t["last"] = now
            say(self.line(t, now))

    @staticmethod
    def line(t: dict, now: float) -> str:
        elapsed = now - t["start"]
        text = f"{t['description']}: "
        if t["total"]:
            done, total = t["completed"], t["total"]
            text += f"{done}/{total} ({100 * done / total:.0f}%), {_clock(elapsed)} elapsed"
            # the rate after the first unit done: the first carries one-time costs (numba compiling a
            # Gibbs sweep's kernels made a first estimate 30 minutes for a fit of seconds)
            since, more = now - t.get("first", now), done - t.get("first_done", done)
            if more > 0 and since > 0:
                text += f", about {_clock(since * (total - done) / more)} left"
        else:
            text += f"{_clock(elapsed)} elapsed"
        return text


class _Ticker(_Background):
    """A spinner's plain counterpart: a line every :data:`LINE_EVERY` seconds while the step runs."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def _run(self):
        import time

        start = time.monotonic()
        while not self.stop.wait(LINE_EVERY):
            say(f"{self.text}: {_clock(time.monotonic() - start)} elapsed")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60:02d}:{seconds % 60:02d}"


def _terminals() -> bool:
    """Whether both stdout and stderr are terminals (then progress is drawn; else it is written)."""
    return _console(False).is_terminal and _console(True).is_terminal


def spinner(text: str):
    """rich's status spinner on a terminal; plain lines now and then otherwise; nothing with --quiet."""
    if QUIET:
        return _NoBar()
    return _console(True).status(text) if _terminals() else _Ticker(text)


def progress_bar():
    """rich's progress bar on a terminal; plain lines now and then (:class:`_Lines`) when output goes
    to a file or a pipe; nothing with --quiet."""
    if QUIET:
        return _NoBar()
    if not _terminals():
        return _Lines()
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    class Steps(Progress):
        def update(self, task_id, *, total=None, completed=None, description=None, **kwargs):
            if _new_step(self._tasks[task_id].description, description):
                self.reset(task_id, total=total, completed=completed or 0, description=description)
                self._tasks[task_id].total = total      # rich's reset keeps the old total for None
            else:
                super().update(task_id, total=total, completed=completed, description=description, **kwargs)

    return Steps(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                 TimeRemainingColumn(), console=_console(True), transient=True)


@contextlib.contextmanager
def small_data():
    """Collects the SmallDataWarnings a fit raises, as their messages, for the command to print as
    one line each after its own (a Python warning would print its file and line)."""
    import warnings

    from ..core.errors import SmallDataWarning

    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallDataWarning)
        try:
            yield messages
        finally:
            for w in caught:
                if issubclass(w.category, SmallDataWarning):
                    messages.append(str(w.message))
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


@contextlib.contextmanager
def said_as_they_come(category):
    """Each warning of ``category`` printed as one line when it is raised (a notice before long
    work), not as Python's file and line; other warnings as usual."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("always", category)
        shown = warnings.showwarning

        def show(message, kind, filename, lineno, file=None, line=None):
            if issubclass(kind, category):
                say(str(message))
            else:
                shown(message, kind, filename, lineno, file, line)
        warnings.showwarning = show
        yield


def on_spinner(status, prefix: str = ""):
    """A callback of the progress protocol (core/progress.py) that shows each status on a spinner."""
    def progress(done=0, total=None, text=""):
        if text and hasattr(status, "update"):
            status.update(prefix + text)
    return progress


def on_bar(bar, task, prefix: str = ""):
    """A callback of the progress protocol (core/progress.py) that moves a progress bar's task: its count,
    its total and, when given, its status as the description (after ``prefix``, which stays)."""
    def progress(done, total=None, status=""):
        bar.update(task, completed=done, total=total,
                   description=f"{prefix} {status}".rstrip() if prefix else status or None)
    return progress


def _new_step(current: str, description: str | None, base: str | None = None) -> bool:
    """A new description starts a new step: its own total (None: unknown) and its own clock; one
    that only adds a status to the step's name (``base``: 'fitting ppmtf training RMSE 0.1') does not."""
    if description is None or description == current:
        return False
    return not (base and description.startswith(base))


def _claim(*paths: Optional[Path], overwrite: bool, inputs=(), directory: bool = True) -> None:
    """Claim the command's outputs before its work (core/files.claimed): refused at once when one
    exists without --overwrite, is not locsynth's to replace, is an input of the command, is being
    written by another locsynth process or cannot be written; held until the command ends."""
    from ..core.files import claimed

    ctx = _click("globals").get_current_context()
    for path in paths:
        if path is not None:
            ctx.with_resource(claimed(path, overwrite=overwrite, directory=directory, inputs=inputs))


# -- options declared by the library (metric groups' options), offered as --NAME ---------------------

def typer_params(options, skip=()) -> list:
    """Click parameters, as typer makes them, for declared options (``metrics.groups.Option``):
    a bool as ``--name/--no-name``, a number without a check as a number, anything with a check or
    choices as text (the declaration parses it: a sample size takes 'none'), each with its help and
    default."""
    import inspect

    params = []
    for opt in options:
        if not opt.cli or opt.name in skip:
            continue
        kind = type(opt.default)
        if kind is bool:
            info, annotation = typer.Option(opt.default, f"{opt.flag}/--no-{opt.flag[2:]}", help=opt.help), bool
        elif opt.choices is not None:
            info = typer.Option(str(opt.default), opt.flag, help=opt.help, metavar="|".join(map(str, opt.choices)))
            annotation = str
        elif kind in (int, float) and opt.check is None:
            info, annotation = typer.Option(opt.default, opt.flag, help=opt.help), kind
        else:
            # an option with its own parser gets the text as typed: a sample size also takes 'none'
            metavar = {int: "<int>", float: "<float>"}.get(kind, "VALUE")
            info = typer.Option(None if opt.default is None else str(opt.default), opt.flag, help=opt.help,
                                metavar=metavar)
            annotation = Optional[str]
        params.append(inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))

    def declared(**kwargs):                                   # pragma: no cover - never called
        return kwargs

    declared.__signature__ = inspect.Signature(params)
    holder = typer.Typer()
    holder.command()(declared)
    return [p for p in typer.main.get_command(holder).params if p.name in {q.name for q in params}]


def declared_command(provider=None, helps: dict | None = None):
    """A typer command class whose options are its function's plus ``provider()``'s (click
    parameters), and whose options named in ``helps`` take their help from ``helps[name]()`` (a
    list read from a registry), built only when the command itself runs or shows its help, so that
    listing the commands imports nothing more. The callback reads the provided options from
    ``ctx.meta`` (see :func:`given_options`)."""
    from typer.core import TyperCommand

    class DeclaredCommand(TyperCommand):
        def get_params(self, ctx):
            params = super().get_params(ctx)
            if not hasattr(self, "_declared"):
                names = {p.name for p in params}
                self._declared = [p for p in (provider() if provider else []) if p.name not in names]
                for p in params:
                    if p.name in (helps or {}):
                        p.help = helps[p.name]()
            return [*params[:-1], *self._declared, params[-1]] if params else list(self._declared)

        def invoke(self, ctx):
            # typer's callback takes only its function's parameters: the declared ones wait in ctx.meta
            ctx.meta["declared"] = {p.name: ctx.params.pop(p.name) for p in getattr(self, "_declared", ())
                                    if p.name in ctx.params}
            return super().invoke(ctx)

    return DeclaredCommand


def given_options(ctx, names) -> dict:
    """The declared options the user gave on the command line (name -> value as typed)."""
    ParameterSource = _click("core").ParameterSource

    values = ctx.meta.get("declared", {})
    return {name: values[name] for name in names
            if name in values and ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


# -- options read from declarations --------------------------------------------------------------
WORKERS_HELP = "Run the per-user work on a local Dask cluster of N single-threaded worker processes."
SCHEDULER_HELP = "Run the per-user work on the running Dask cluster at this scheduler address (tcp://HOST:PORT)."
PARAMS = {"allow_extra_args": True, "ignore_unknown_options": True}


def _table(title: str, columns: list[str], rows: list[list[str]], compact: bool = False,
           groups: list[str] | None = None):
    """Print a table laid out by evaluation/report/terminal.py."""
    from ..evaluation.report.terminal import TerminalTable

    console().print(TerminalTable(title, columns, rows, compact, groups).rich())


def _fmt(value, digits: int = 4) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def _declared(options: dict) -> dict[str, inspect.Parameter]:
    """A method's declared fit or sample options (name -> (default, help[, type])) as parameters."""
    out = {}
    for name, spec in options.items():
        default, annotation = spec[0], (spec[2].__name__ if len(spec) > 2 else inspect.Parameter.empty)
        out[name] = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    return out


def _method_args(kind, extra: list[str], pairs: list[str], options: dict | None = None,
                 what: str = "hyperparameter") -> tuple[dict, dict]:
    """(hyperparameters, options): the given --NAME VALUE split between the constructor's
    parameters and the step's declared ``options`` (a method's fit_options or sample_options);
    with ``what`` = "sample option" only the options are accepted."""
    declared = _declared(options or {})
    accepted = declared if what != "hyperparameter" else {**kind.hyperparameters(), **declared}
    given = _hyperparameters(kind, extra, pairs, accepted, what)
    return ({k: v for k, v in given.items() if k not in declared}, {k: v for k, v in given.items() if k in declared})


def _hyperparameters(kind, extra: list[str], pairs: list[str], accepted=None, what: str = "hyperparameter") -> dict:
    """``--name value``, ``--name=value``, ``--flag`` / ``--no-flag`` and ``--param name=value``
    for the constructor parameters of ``kind`` (or ``accepted``), converted to the type of their
    defaults."""
    accepted = kind.hyperparameters() if accepted is None else accepted
    aliases = getattr(kind, "cli_aliases", {})

    def key(name: str) -> str:
        return aliases.get(name, name.replace("-", "_"))

    given: list[tuple[str, str]] = []
    i = 0
    while i < len(extra):
        token = extra[i]
        if not token.startswith("--"):
            raise InputError(f"unexpected argument {token!r}")
        name, eq, value = token[2:].partition("=")
        if not eq:
            if key(name) in accepted and _is_bool(accepted[key(name)]):
                value = "true"
            elif name.startswith("no-") and key(name[3:]) in accepted:
                name, value = name[3:], "false"
            elif i + 1 < len(extra) and not extra[i + 1].startswith("--"):
                i += 1
                value = extra[i]
            elif key(name) in accepted:
                raise InputError(f"--{name} needs a value")
        given.append((name, value))
        i += 1
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq:
            raise InputError(f"--param {pair!r} is not NAME=VALUE")
        given.append((name, value))
    params = {}
    for name, value in given:
        if key(name) not in accepted:
            listed = ", ".join("--" + p.replace("_", "-") for p in accepted) or "none"
            raise InputError(f"{kind.name} has no {what} --{name}; its {what}s: {listed}")
        params[key(name)] = _convert(kind, name, value, accepted[key(name)])
    return params


def _is_bool(param: inspect.Parameter) -> bool:
    return isinstance(param.default, bool) or param.annotation in (bool, "bool")


def _convert(kind, name: str, text: str, param: inspect.Parameter):
    """One value read as every spelling reads it (validation.parse_value, the declared check for a
    hyperparameter); the library's error names the parameter, this one its flag."""
    from ..core.validation import parse_value

    hyper = kind.declarations().get(param.name)
    annotation = str(param.annotation)
    like = param.default if param.default not in (None, inspect.Parameter.empty) else (
        0 if annotation.startswith("int") else 0.0 if annotation.startswith("float") else "")
    try:
        if hyper is not None:
            return hyper.parse(text)
        value = parse_value(text, like)
        if isinstance(like, bool) and not isinstance(value, bool):
            raise InputError(f"{param.name} must be true or false, got {text!r}")
        if isinstance(like, (int, float)) and (isinstance(value, str) or isinstance(like, int) and
                                               not float(value).is_integer()):
            raise InputError(f"{param.name} must be {'a whole number' if isinstance(like, int) else 'a number'}, "
                             f"got {text!r}")
        return value
    except InputError as exc:
        raise InputError(as_flag(str(exc), param.name, f"--{name}") + f" ({kind.name})") from None


def as_flag(message: str, parameter: str, flag: str) -> str:
    """A library error that names ``parameter`` (at its start) naming the command-line ``flag`` instead."""
    return flag + message[len(parameter):] if message.startswith(parameter + " ") else message
