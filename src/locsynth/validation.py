"""Public checks of parameters and inputs, one home for what every module validates: each returns
the value in its proper type or raises one InputError that names what was wrong."""

from __future__ import annotations

import math

from .errors import InputError


def check_count(name: str, value) -> int:
    """A whole number >= 1, or an InputError naming it."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a whole number, got {value!r}") from None
    if number != value or number < 1:
        raise InputError(f"{name} must be at least 1, got {value!r}")
    return number


def check_share(value, name: str) -> float:
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


def check_time_shift(hours, name: str = "--time-shift") -> float:
    """A clock correction in hours: a finite number in [-24, 24] (or its text), or an InputError
    naming it. The bound catches minutes or seconds given for hours."""
    try:
        value = math.nan if isinstance(hours, bool) else float(hours)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and -24.0 <= value <= 24.0):
        raise InputError(f"{name} must be a number of hours in [-24, 24] (e.g. 8 or -3.5), got {hours!r}")
    return value
