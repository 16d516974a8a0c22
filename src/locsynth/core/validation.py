"""Public checks of parameters and inputs, one home for what every module validates: each takes
``(value, name)``, returns the value in its proper type or raises one InputError that names what
was wrong, so that any of them can be a hyperparameter's declared check (synth/base.py)."""

from __future__ import annotations

import math

import numpy as np

from .errors import InputError, did_you_mean


def check_count(value, name: str = "count") -> int:
    """A whole number >= 1, or an InputError naming it."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise InputError(f"{name} must be an integer, got {value!r}")     # text: "10" is no count
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a whole number, got {value!r}") from None
    if number != value:
        raise InputError(f"{name} must be a whole number, got {value!r}")
    if number < 1:
        raise InputError(f"{name} must be at least 1, got {value!r}")
    return number


def size_text(nbytes: float) -> str:
    """A number of bytes as people read it: 24.3 TiB, 512 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.3g} {unit}" if unit != "B" else f"{nbytes:.0f} B"
        nbytes /= 1024
    return f"{nbytes:.3g} PiB"


def check_memory(nbytes: float, what: str) -> None:
    """An InputError, before anything is allocated, when ``what`` would take ``nbytes``, more than
    the memory this machine has available (psutil)."""
    import psutil

    available = psutil.virtual_memory().available
    if nbytes > available:
        raise InputError(f"{what} would take {size_text(nbytes)}, more than the {size_text(available)} of memory "
                         "this machine has available")


def check_share(value, name: str = "share") -> float:
    """A share of a budget: a number in [0, 1), or an InputError naming it."""
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in [0, 1), got {value!r}") from None
    if not 0.0 <= share < 1.0:
        raise InputError(f"{name} must be in [0, 1), got {value!r}")
    return share


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """epsilon as a float, or an InputError unless it is finite and positive."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {epsilon!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be a positive finite number, got {epsilon!r}")
    return value


def check_delta(delta: float) -> float:
    """delta as a float, or an InputError unless 0 <= delta < 1."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"delta must be a number, got {delta!r}") from None
    if not (0.0 <= value < 1.0):
        raise InputError(f"delta must be in [0, 1), got {delta!r}")
    return value


def check_sensitivity(sensitivity: float) -> float:
    """sensitivity as a float, or an InputError unless it is finite and positive."""
    return check_epsilon(sensitivity, "sensitivity")


def check_time_shift(hours, name: str = "`time_shift`") -> float:
    """A clock correction in hours: a finite number in [-24, 24] (or its text), or an InputError
    naming it. The bound catches minutes or seconds given for hours."""
    try:
        value = math.nan if isinstance(hours, bool) else float(hours)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and -24.0 <= value <= 24.0):
        raise InputError(f"{name} must be a number of hours in [-24, 24] (e.g. 8 or -3.5), got {hours!r}")
    return value


def check_whole(value, name: str = "value", minimum: int = 0) -> int:
    """A whole number >= ``minimum`` (a seed, a count that may be 0), or an InputError naming it."""
    try:
        number = None if isinstance(value, (str, bytes, bool, np.bool_)) else int(value)
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or number != value or number < minimum:
        raise InputError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return number


def check_seed(value, name: str = "seed") -> int:
    """A seed: a whole number >= 0."""
    return check_whole(value, name, 0)


def check_probability(value, name: str = "probability") -> float:
    """A number in [0, 1], or an InputError naming it."""
    try:
        share = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        share = math.nan
    if not 0.0 <= share <= 1.0:
        raise InputError(f"{name} must be a number in [0, 1], got {value!r}")
    return share


def check_positive(value, name: str = "value") -> float:
    """A finite number > 0 (a scale, a learning rate, a clipping norm)."""
    return check_epsilon(value, name)


def check_flag(value, name: str = "flag") -> bool:
    """True or False (or their usual spellings in text), or an InputError naming it."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise InputError(f"{name} must be true or false, got {value!r}")


def one_of(*choices):
    """A check that the value is one of ``choices`` (an InputError names them)."""
    def check(value, name: str = "value"):
        if value not in choices:
            raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}{did_you_mean(value, choices)}")
        return value
    check.choices = choices
    return check


def optional(check):
    """``check``, or None accepted as it is."""
    def maybe(value, name: str = "value"):
        return None if value is None else check(value, name)
    maybe.choices = getattr(check, "choices", None)
    return maybe


def parse_value(text: str, default=None):
    """A value given as text on a command line or in a spec (``NAME=VALUE`` everywhere), read as the
    type of ``default``: bool from true/false/yes/no/1/0, int, float, a tuple from comma-separated
    numbers, None from 'none' where the default may be None; otherwise JSON where it parses
    (numbers, lists, null, true/false) and else the text itself. The declared check then judges it."""
    import json

    if not isinstance(text, str):
        return text
    raw = text.strip()
    if raw.lower() in ("none", "null") and not isinstance(default, str):
        return None
    if isinstance(default, bool):
        return {"true": True, "1": True, "yes": True, "on": True,
                "false": False, "0": False, "no": False, "off": False}.get(raw.lower(), raw)
    if isinstance(default, tuple):
        parts = [p for p in raw.strip("()[] ").split(",") if p.strip()]
        try:
            return tuple(json.loads(p) for p in parts)
        except json.JSONDecodeError:
            return raw
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        try:
            number = float(raw)
        except ValueError:
            return raw
        return int(number) if isinstance(default, int) and number == int(number) and "." not in raw and \
            "e" not in raw.lower() else number
    if isinstance(default, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_assignment(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> (name with - as _, value text); an InputError for anything else."""
    name, sep, value = str(text).partition("=")
    if not sep or not name.strip():
        raise InputError(f"expected NAME=VALUE, got {text!r}")
    return name.strip().replace("-", "_"), value


def whole(minimum: int = 0):
    """A check of a whole number >= ``minimum``."""
    def check(value, name: str = "value") -> int:
        return check_whole(value, name, minimum)
    return check


def in_range(low: float | None = None, high: float | None = None, *, open_low: bool = False,
             open_high: bool = False):
    """A check of a finite number between ``low`` and ``high`` (None: unbounded; ``open_*``: the bound excluded)."""
    def check(value, name: str = "value") -> float:
        try:
            number = math.nan if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            number = math.nan
        ok = math.isfinite(number)
        if ok and low is not None:
            ok = number > low if open_low else number >= low
        if ok and high is not None:
            ok = number < high if open_high else number <= high
        if not ok:
            lo = "" if low is None else f"{'(' if open_low else '['}{low:g}"
            hi = "" if high is None else f"{high:g}{')' if open_high else ']'}"
            where = f"in {lo or '(-inf'}, {hi or 'inf)'}"
            raise InputError(f"{name} must be a number {where}, got {value!r}")
        return number
    return check
