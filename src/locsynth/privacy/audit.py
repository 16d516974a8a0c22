"""Statistical tests of a differential-privacy claim, the way trusted libraries test themselves.

Run the mechanism many times on two neighbouring inputs and histogram a statistic of its outputs
(any function of the output: DP survives post-processing, so a correct mechanism passes whatever
the statistic; a good one, such as the privacy-loss variable under the claimed noise, makes a
broken mechanism fail). Then, in both directions (P1 against P2 and P2 against P1):

``method="ratio"`` (pure epsilon-DP; Google's stochastic tester checks p_x <= e^eps p_y per bin
with confidence bands): the largest log ratio of a Clopper-Pearson lower bound of one bin's
probability to the upper bound of the other's, at confidence 1 - beta over all bins together
(Bonferroni); the claim is rejected when it exceeds epsilon.

``method="histogram"`` ((epsilon, delta)-DP; DP-Auditorium's histogram tester, Kong et al.,
IEEE S&P 2024):

.. math:: \\hat\\delta = \\sum_b \\max(0, \\hat p_1(b) - e^\\epsilon \\hat p_2(b))

minus the sampling tolerance 2/sqrt(n) sum sqrt(p1) + 2 e^eps/sqrt(n) sum sqrt(p2)
+ 6 (1 + e^eps) sqrt(ln(4 / beta) / (2 n)); rejected when that reaches delta. Its tolerance is
wide (about 0.3 at 20,000 samples and epsilon = 1), so for pure DP the ratio test, whose bands are
per bin, catches far smaller excesses with the same samples.

A claim fails when most repeats reject it.

What a sampling test cannot see: an event of probability far below 1 / n. The floating-point
attack on a textbook Laplace sampler (Mironov, CCS 2012) is not such an event: outputs that one
input can produce and its neighbour cannot make up a large share (tests/test_dp_mechanisms.py
shows one of about 10%), so it is caught once the statistic looks at the bits of the output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core.errors import InputError
from ..core.validation import check_delta, check_epsilon


@dataclass(frozen=True)
class AuditResult:
    """delta_hat and tolerance have shape (repeats, 2): both directions of every repeat."""

    passed: bool
    epsilon: float
    delta: float
    delta_hat: np.ndarray
    tolerance: np.ndarray
    rejections: int
    samples: int

    def __str__(self) -> str:
        verdict = "passes" if self.passed else "fails"
        worst = np.unravel_index(np.argmax(self.delta_hat - self.tolerance), self.delta_hat.shape)
        return (f"(epsilon = {self.epsilon:g}, delta = {self.delta:g}) {verdict}: {self.rejections} of "
                f"{self.delta_hat.shape[0]} repeats reject; worst estimate {self.delta_hat[worst]:.4f} against "
                f"{self.tolerance[worst]:.4f} ({self.samples} samples per input)")


def histogram_delta(counts1: np.ndarray, counts2: np.ndarray, epsilon: float, beta: float = 0.05
                    ) -> tuple[float, float]:
    """(delta-hat, tolerance) of P1 against e^epsilon P2 from two histograms of n samples each."""
    c1, c2 = np.asarray(counts1, np.float64), np.asarray(counts2, np.float64)
    n = c1.sum()
    if n <= 0 or c2.sum() != n:
        raise InputError("both histograms need the same positive number of samples")
    p1, p2 = c1 / n, c2 / n
    e = np.exp(epsilon)
    estimate = float(np.maximum(0.0, p1 - e * p2).sum())
    tolerance = float(2 / np.sqrt(n) * np.sqrt(p1).sum() + 2 * e / np.sqrt(n) * np.sqrt(p2).sum()
                      + 6 * (1 + e) * np.sqrt(np.log(4 / beta) / (2 * n)))
    return estimate, tolerance


def ratio_epsilon(counts1: np.ndarray, counts2: np.ndarray, beta: float = 0.05) -> float:
    """The largest log(p1_low(b) / p2_high(b)) over bins b (Clopper-Pearson bounds at joint
    confidence 1 - beta): a lower bound on epsilon for pure DP; -inf when no bin gives one."""
    from .empirical import clopper_pearson

    c1, c2 = np.asarray(counts1, np.float64), np.asarray(counts2, np.float64)
    confidence = 1 - beta / max(c1.size, 1)
    low1, _ = clopper_pearson(c1, np.full_like(c1, c1.sum()), confidence)
    _, high2 = clopper_pearson(c2, np.full_like(c2, c2.sum()), confidence)
    with np.errstate(divide="ignore"):
        ratios = np.log(low1) - np.log(high2)
    return float(ratios.max()) if ratios.size else -np.inf


def audit(mechanism: Callable[[object, int], np.ndarray], x1, x2, epsilon: float, *, delta: float = 0.0,
          samples: int = 20_000, repeats: int = 3, bins=None, statistic: Callable | None = None,
          beta: float = 0.05, method: str | None = None) -> AuditResult:
    """Test the claim that ``mechanism`` is (epsilon, delta)-DP on the neighbours ``x1``, ``x2``.

    Parameters
    ----------
    mechanism : callable(x, n)
        The mechanism run n times on input x: an ndarray of n outputs (first axis).
    statistic : callable(outputs) -> ndarray of shape (n,), optional
        What is histogrammed; the outputs themselves by default (they must then be one number each).
    bins : array of edges, optional
        Bin edges of the statistic (values outside fall in two open-ended bins); None: every
        distinct value is a bin (discrete outputs).
    method : {'ratio', 'histogram'}, optional
        The test (module docstring); by default 'ratio' for delta = 0, else 'histogram'. For
        'ratio', ``delta_hat`` holds the epsilon lower bounds and ``tolerance`` epsilon.
    """
    eps, delta = check_epsilon(epsilon), check_delta(delta)
    method = method or ("ratio" if delta == 0 else "histogram")
    if method not in ("ratio", "histogram"):
        raise InputError(f"unknown audit method {method!r}; expected 'ratio' or 'histogram'")
    if method == "ratio" and delta > 0:
        raise InputError("the ratio test checks pure epsilon-DP; use method='histogram' for delta > 0")
    if samples < 1 or repeats < 1:
        raise InputError("an audit needs at least one sample and one repeat")
    stat = statistic or (lambda y: np.asarray(y))
    est = np.zeros((repeats, 2))
    tol = np.zeros((repeats, 2))
    for r in range(repeats):
        s1 = np.asarray(stat(mechanism(x1, samples))).reshape(samples)
        s2 = np.asarray(stat(mechanism(x2, samples))).reshape(samples)
        h1, h2 = _histograms(s1, s2, bins)
        if method == "ratio":
            est[r] = ratio_epsilon(h1, h2, beta / 2), ratio_epsilon(h2, h1, beta / 2)
            tol[r] = eps
        else:
            est[r, 0], tol[r, 0] = histogram_delta(h1, h2, eps, beta)
            est[r, 1], tol[r, 1] = histogram_delta(h2, h1, eps, beta)
    rejected = int(((est - tol) > delta).any(axis=1).sum() if method == "ratio"
                   else ((est - tol) >= delta).any(axis=1).sum())
    return AuditResult(rejected * 2 <= repeats, eps, delta, est, tol, rejected, samples)


def _histograms(s1: np.ndarray, s2: np.ndarray, bins) -> tuple[np.ndarray, np.ndarray]:
    if bins is None:
        values, index = np.unique(np.concatenate([s1, s2]), return_inverse=True)
        return (np.bincount(index[:s1.size], minlength=values.size),
                np.bincount(index[s1.size:], minlength=values.size))
    edges = np.concatenate([[-np.inf], np.asarray(bins, np.float64), [np.inf]])
    return np.histogram(s1, edges)[0], np.histogram(s2, edges)[0]


# -- sensitivities, checked on coupled runs ------------------------------------------------------

@dataclass
class Noised:
    """One vector handed to OpenDP: which measurement (``kind``: "laplace" for the L1 ones,
    "top-k" for the monotonic L-infinity one), the sensitivity its privacy map was asked for
    (``d_in``), the true input ``x`` and the output returned."""

    kind: str
    x: np.ndarray | None = None
    d_in: float | None = None
    out: object = None


class CoupledNoise:
    """Stand in for OpenDP's door (privacy/_opendp.py) while a mechanism runs on two neighbouring
    inputs, one after the other: the first run draws real noise and records every vector it noised;
    the second gets the first run's outputs back, call by call, and records its own inputs. Both
    runs then see the same noisy values, so whatever a method computes from them (a grid, a tree,
    which states get second-order tables) is the same, and each pair of recorded inputs must lie
    within the sensitivity its noise assumed: that is what the composition proof needs, step by step.

    ::

        with CoupledNoise() as noise:
            fit(d1)
            noise.replay()
            fit(d2)
        problems = noise.violations()
    """

    def __init__(self):
        self.first: list[Noised] = []
        self.second: list[Noised] = []
        self._replaying = False

    def __enter__(self) -> "CoupledNoise":
        from . import _opendp

        self._saved = {name: getattr(_opendp, name) for name in ("float_laplace", "integer_laplace", "noisy_top_k")}
        for name, kind in (("float_laplace", "laplace"), ("integer_laplace", "laplace"), ("noisy_top_k", "top-k")):
            setattr(_opendp, name, self._factory(self._saved[name], kind))
        return self

    def __exit__(self, *exc) -> None:
        from . import _opendp

        for name, fn in self._saved.items():
            setattr(_opendp, name, fn)

    def replay(self) -> None:
        """From now on, hand back the first run's outputs (the second run)."""
        self._replaying = True

    def _factory(self, real, kind: str):
        def make(*args, **kwargs):
            return _Measurement(self, real(*args, **kwargs), kind)
        return make

    def violations(self, factor: float = 1.0) -> list[str]:
        """What the second run's inputs broke: a different number of noised vectors, a vector of
        another size, an L1 change (Laplace) or an L-infinity or non-monotonic change (top-k)
        beyond ``factor`` x the sensitivity (``factor`` 2 for replace-one neighbours of add/remove
        spends). Empty when every step held."""
        out = []
        if len(self.first) != len(self.second):
            out.append(f"{len(self.first)} noised vectors on one input and {len(self.second)} on its neighbour")
        for i, (a, b) in enumerate(zip(self.first, self.second)):
            if a.x is None or b.x is None or a.d_in is None:
                out.append(f"vector {i} ({a.kind}) was noised without a stated sensitivity")
                continue
            if a.x.shape != b.x.shape:
                out.append(f"vector {i} ({a.kind}) has {a.x.size} entries on one input and {b.x.size} on its neighbour")
                continue
            diff, bound = b.x - a.x, factor * float(a.d_in) * (1 + 1e-9) + 1e-9
            if a.kind == "laplace" and np.abs(diff).sum() > bound:
                out.append(f"vector {i} (laplace) moved by {np.abs(diff).sum():.6g} in L1 against the sensitivity "
                           f"{a.d_in:g} its noise assumed")
            if a.kind == "top-k" and (np.abs(diff).max(initial=0) > bound or ((diff > 0).any() and (diff < 0).any())):
                out.append(f"vector {i} (top-k scores) moved by {np.abs(diff).max(initial=0):g} in L-infinity or in "
                           f"both directions, against the monotonic sensitivity {a.d_in:g}")
        return out


class _Measurement:
    """A measurement of OpenDP's door, seen through :class:`CoupledNoise`."""

    def __init__(self, coupling: CoupledNoise, real, kind: str):
        self.coupling, self.real = coupling, real
        runs = coupling.second if coupling._replaying else coupling.first
        self.entry = Noised(kind)
        self.index = len(runs)
        runs.append(self.entry)

    def map(self, d_in):
        self.entry.d_in = float(d_in)
        return self.real.map(d_in)

    def __call__(self, x):
        self.entry.x = np.asarray(x, np.float64)
        first = self.coupling.first
        if self.coupling._replaying and self.index < len(first) and first[self.index].x.shape == self.entry.x.shape:
            self.entry.out = first[self.index].out
        else:
            self.entry.out = self.real(x)
        return self.entry.out
