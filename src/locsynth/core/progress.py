"""The one progress protocol of long steps: ``progress(done, total, status="")``.

``done`` counts what is finished, ``total`` what there is (None when unknown) and ``status`` names
the step or says how it goes ('pairs of users', 'training RMSE 0.31'); a step that has no count
reports ``progress(0, None, status)``. Every fit, sample, evaluation, contest run, LBS scenario,
benchmark and demo calls it so, and a caller that only counts may take two arguments.
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
