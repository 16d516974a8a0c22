"""The one progress protocol of long steps: ``progress(done, total, status="")``.

``done`` counts what is finished, ``total`` what there is (None when unknown) and ``status`` names
the step or says how it goes ('pairs of users', 'training RMSE 0.31'); a step that has no count
reports ``progress(0, None, status)``. Every fit, sample, evaluation, contest run, LBS scenario,
benchmark and demo calls it so, and a caller that only counts may take two arguments.

In Python, ``progress=True`` asks ``fit``, ``sample``, ``evaluate`` and ``run_benchmark`` for a bar
(:class:`Bar`, tqdm.auto's: a widget in Jupyter, a text line in a terminal); the default, None,
stays silent as scripts want.
"""

from __future__ import annotations

import inspect


def reporter(progress):
    """``progress`` as a callable of the protocol: a no-op for None, and a one-argument callable (the
    form ``evaluate`` and the contest took before the protocol: ``progress(step)``) given the status."""
    if progress is None:
        return lambda done, total=None, status="": None
    try:
        params = [p for p in inspect.signature(progress).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        varargs = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(progress).parameters.values())
    except (TypeError, ValueError):
        return progress
    if len(params) == 1 and not varargs:
        return lambda done, total=None, status="": progress(status)
    return progress


def resolve(progress, what: str = ""):
    """``progress`` as given, a :class:`Bar` named ``what`` for True, None for False."""
    if progress is True:
        return Bar(what)
    return None if progress is False else progress


#: how a bar without a total shows (tqdm's default would read "0it [00:00, ?it/s]"), and one with
#: its total (its count against the total; no rate, which a step's reset of the count makes meaningless)
NO_TOTAL = "{desc}: {elapsed}{postfix}"
WITH_TOTAL = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"


class Bar:
    """The protocol as a tqdm.auto bar, made at the first report and closed when the count is
    complete (or by :meth:`close`); a report with no total shows its status and the time elapsed,
    and a count that arrives turns it into a bar of ``done / total``."""

    def __init__(self, what: str = ""):
        self.what = what
        self._bar = None

    def __call__(self, done, total=None, status: str = "") -> None:
        from tqdm.auto import tqdm

        if self._bar is None:
            self._bar = tqdm(total=total, desc=self.what or None, leave=True, dynamic_ncols=True,
                             bar_format=NO_TOTAL if total is None else WITH_TOTAL)
        elif total is not None and self._bar.total != total:
            self._bar.bar_format = WITH_TOTAL
            self._bar.reset(total=total)               # a count arrives (or a new step): the same bar
        self._bar.n = int(done or 0)
        if status:
            self._bar.set_postfix_str(str(status), refresh=False)
        self._bar.refresh()
        if total is not None and done is not None and done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
