"""The one exception type that means "the input was wrong" (the CLI prints it as one line), and the
warning that a DP fit had too few data for its epsilon."""


class InputError(ValueError):
    """Bad input: a file, row, argument or directory that is not what was expected.

    The message names what was wrong and what was expected, e.g.
    ``latitude 91.5 out of range [-90, 90] in points.csv row 2``.
    """



def closest(name: object, valid) -> str | None:
    """The valid name closest to a misspelled ``name`` (difflib, as click's "did you mean"), or None."""
    import difflib

    close = difflib.get_close_matches(str(name).lower(), [str(v) for v in valid], n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(name: object, valid) -> str:
    """The hint `` (did you mean 'x'?)`` for the closest valid name, or an empty string."""
    close = closest(name, valid)
    return f" (did you mean {close!r}?)" if close else ""


def unknown(what: str, name: object, valid) -> InputError:
    """The error for a name not among ``valid``, naming the closest valid one as click's tools do:
    "unknown method 'privtrce'; did you mean 'privtrace'? expected one of ..."."""
    valid = [str(v) for v in valid]
    close = closest(name, valid)
    hint = f"did you mean {close!r}? " if close else ""
    return InputError(f"unknown {what} {name!r}; {hint}expected one of {', '.join(valid)}")


class SmallDataWarning(UserWarning):
    """A DP fit on data too few for its epsilon: most of what the release is drawn from would be
    noise (the estimate, privacy/noise.py, is on the model and on every release's card). It names
    the number of trajectories for the data holder who fits; nothing released names it."""


class LongRunWarning(UserWarning):
    """Work that takes minutes at the size given, said before it starts, with the faster way."""
