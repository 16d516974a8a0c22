"""Optimized unary encoding (OUE; Wang, Blocki, Li and Jha, "Locally differentially private protocols
for frequency estimation", USENIX Security 2017, §4.4), the frequency oracle of LDPTrace.

A user holds one value v in 0 .. d-1 and reports d bits: bit v is 1 with probability p = 1/2, every
other bit with probability q = 1 / (e^epsilon + 1), all independent. For two values a, b and any
report y only bits a and b differ in law, so

    P(y | a) / P(y | b) <= (p / q) ((1 - q) / (1 - p)) = (1 - q) / q = e^epsilon:

epsilon-LDP for the one value (Wang et al., Theorem 2 with p = 1/2). Of n reports, C_v having bit v
set, the collector's unbiased estimate of how many users hold v is (C_v - n q) / (p - q) (their
eq. (2)), with variance n q (1 - q) / (p - q)^2 for a value nobody holds.

No value (``-1``): every bit is Bernoulli(q). That is OUE over d + 1 values with the extra value's
bit left out (post-processing), so a report of no value is as private as any: a user whose
trajectory is shorter than the others' pads with such reports (synth/ldptrace), and how many
reports a user sends says nothing. The estimate above stays unbiased: a report of no value adds q
to every bit, as one of another value does.

Noise: OpenDP's randomized response on packed bit vectors (_opendp.bit_flips), which samples every
bit with the operating system's randomness: a vector of zeros with f = 2q gives the Bernoulli(q)
bits of many reports in one call, one with f = 1 the fair coins of their values' own bits. No
draw comes from a seeded numpy generator.

The collector's tally (:func:`tally`). All the collector keeps of R reports is, per value v, C_v,
how many have bit v set. Every bit is independent, so C_v = Bin(h_v, 1/2) + Bin(R - h_v, q) where
h_v reports hold v, independent across v: drawing C directly gives the tally of R users' reports in
law with about 2 d draws instead of R d bits (LDPTrace's 1.7 million users send some 10^9 bits,
which OpenDP samples at about 3 million a second: the users' own work, 20 minutes on one machine,
not the collector's). OpenDP has no binomial sampler, so :func:`binomial` inverts the binomial's
distribution function (boost's, through scipy) at a uniform of 53 of OpenDP's fair bits: an outcome
whose probability is below 2^-53 may be missed and any outcome's probability is off by at most
2^-53 plus the function's rounding (about 1e-15 relative), which no sampling test can see and which
the privacy claim states as is. :func:`perturb` stays the protocol a user runs, and what
one user sends is audited on it (tests/test_ldptrace.py); the tally is audited on neighbouring
sets of reports, and its law checked against the sums of :func:`perturb`'s bits.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import InputError
from .ledger import Ledger, Spend
from ..core.validation import check_epsilon
from . import _opendp

#: the probability that a value's own bit is reported as 1
P = 0.5
#: bits per call of OpenDP's sampler (a long draw is made in pieces, each one packed vector)
PIECE = 1 << 22


#: the epsilons of one report OUE draws as stated in floating point: below, q = 1 / (e^epsilon + 1)
#: rounds to 1/2 (the report says nothing, and its epsilon computes as 0); above, e^-epsilon
#: underflows towards 0 and q with it (no noise at all; at 1e9, a division by zero)
EPSILON_RANGE = (1e-12, 700.0)


def check_report_epsilon(epsilon: float, what: str = "an OUE report's epsilon") -> float:
    """``epsilon`` when it lies in :data:`EPSILON_RANGE`, else an InputError naming ``what`` was given."""
    eps = check_epsilon(epsilon)
    low, high = EPSILON_RANGE
    if not low <= eps <= high:
        raise InputError(f"{what} is {eps:.3g}, outside the {low:g} to {high:g} that OUE draws as stated: its flip "
                         f"probability 1 / (e^epsilon + 1) {'rounds to 1/2' if eps < low else 'underflows to 0'}")
    return eps


def flip_probability(epsilon: float) -> float:
    """q = 1 / (e^epsilon + 1): the probability that any other bit is reported as 1 (epsilon in
    :data:`EPSILON_RANGE`)."""
    e = math.exp(-check_report_epsilon(epsilon))
    return e / (1.0 + e)


def oue_epsilon(p: float, q: float) -> float:
    """The epsilon of unary encoding with bit probabilities p (own) and q (other): ln(p (1 - q) / ((1 - p) q))."""
    return math.log(p * (1 - q) / ((1 - p) * q))


def bernoulli_bits(n: int, prob: float) -> np.ndarray:
    """``n`` independent Bernoulli(``prob``) bits (bool) from OpenDP (module docstring), prob <= 1/2;
    about 0.3 microseconds a bit on one core (OpenDP samples each from the operating system's
    randomness), drawn in pieces of PIECE bits."""
    n = int(n)
    if n == 0 or prob <= 0:
        return np.zeros(n, bool)
    if prob > 0.5:
        raise InputError(f"bit flips draw probabilities up to 1/2, got {prob!r}")
    flips = _opendp.bit_flips(min(2.0 * prob, 1.0))
    drawn = [np.unpackbits(np.frombuffer(flips(bytes((k + 7) // 8)), np.uint8), count=k)
             for k in (min(PIECE, n - lo) for lo in range(0, n, PIECE))]
    return np.concatenate(drawn).astype(bool)


#: bits of a uniform: 53, a double's significand, so that j / 2^53 is exact
UNIFORM_BITS = 53


def uniforms(n: int) -> np.ndarray:
    """``n`` uniforms j / 2^53 (j uniform in 0 .. 2^53 - 1), each of 53 of OpenDP's fair bits."""
    bits = bernoulli_bits(int(n) * UNIFORM_BITS, P).reshape(int(n), UNIFORM_BITS)
    return bits @ (2.0 ** -np.arange(1, UNIFORM_BITS + 1))


def binomial_at(u, n, p: float) -> np.ndarray:
    """The inversion of Bin(n, p) at ``u`` (elementwise; u in [0, 1)): the smallest k with
    F(k) > u, found by bisection on k (as many rounds as n has bits); where u > 1/2 the test is
    S(k) < 1 - u on the survival function, which keeps its accuracy in the upper tail."""
    from scipy.stats import binom

    u = np.asarray(u, np.float64)
    n = np.broadcast_to(np.asarray(n, np.int64), u.shape)
    lo, hi = np.full(u.shape, -1, np.int64), n.copy()              # F(lo) <= u < F(hi)
    while (open_ := hi - lo > 1).any():
        mid = (lo + hi) // 2
        above = np.where(u <= 0.5, binom.cdf(mid, n, p) > u, binom.sf(mid, n, p) < 1.0 - u)
        hi = np.where(open_ & above, mid, hi)
        lo = np.where(open_ & ~above, mid, lo)
    return hi


def binomial(n, p: float) -> np.ndarray:
    """One Bin(n_i, p) draw for each entry of ``n``, by inversion (:func:`binomial_at`) at OpenDP uniforms."""
    n = np.asarray(n, np.int64)
    return binomial_at(uniforms(n.size).reshape(n.shape), n, float(p))


def tally(held, reports: int, epsilon: float) -> np.ndarray:
    """The collector's bit counts C of ``reports`` OUE reports at ``epsilon``, ``held[..., v]`` of
    which hold value v (the rest no value), drawn in law (module docstring): C_v = Bin(held_v, 1/2) +
    Bin(reports - held_v, q). Leading axes of ``held`` give independent tallies."""
    h = np.asarray(held, np.int64)
    if h.ndim < 1 or (h < 0).any() or (h.sum(axis=-1) > int(reports)).any():
        raise InputError(f"a tally needs counts of values (>= 0) that add up to at most the {reports} reports, "
                         f"got counts adding up to {int(h.sum(axis=-1).max(initial=0))}")
    return binomial(h, P) + binomial(int(reports) - h, flip_probability(epsilon))


def perturb(values, d: int, epsilon: float) -> np.ndarray:
    """The OUE reports of ``values`` (integers in 0 .. d-1, or -1 for no value; any shape): bool of
    shape ``values.shape + (d,)``, the last axis one report's bits."""
    x = np.asarray(values)
    if x.dtype.kind not in "iu":
        raise InputError(f"unary encoding needs integer values, got {x.dtype}")
    d = int(d)
    if d < 1:
        raise InputError(f"unary encoding needs a domain of at least 1 value, got {d}")
    if x.size and (x.min() < -1 or x.max() >= d):
        raise InputError(f"unary-encoded values must be in 0..{d - 1} (or -1 for none), "
                         f"got {int(x.min())}..{int(x.max())}")
    bits = bernoulli_bits(x.size * d, flip_probability(epsilon)).reshape(x.size, d)
    held = np.flatnonzero(x.ravel() >= 0)
    bits[held, x.ravel()[held]] = bernoulli_bits(held.size, P)
    return bits.reshape(x.shape + (d,))


def estimate(ones, reports: int, epsilon: float) -> np.ndarray:
    """Unbiased counts from ``ones`` (per value, how many of ``reports`` reports have its bit set):
    (C_v - n q) / (p - q); negative where noise outweighs the value (post-processing is the caller's)."""
    q = flip_probability(epsilon)
    return (np.asarray(ones, np.float64) - reports * q) / (P - q)


def noise_sd(reports: int, epsilon: float) -> float:
    """The standard deviation of :func:`estimate` for a value no report holds: sqrt(n q (1 - q)) / (p - q)."""
    q = flip_probability(epsilon)
    return float(np.sqrt(reports * q * (1 - q)) / (P - q))


def record(ledger: Ledger, epsilon: float, *, reports: int = 1, unit: str = "trace", saw: str = "",
           domain: str = "its values") -> Spend:
    """Record ``reports`` OUE reports per ``unit`` at ``epsilon`` each as one local spend of their
    basic composition: reports x epsilon, any two values of one unit's data (``domain`` says over
    what the reports range, which is public)."""
    eps = oue_epsilon(P, flip_probability(epsilon))
    return ledger.record("oue", int(reports) * eps, 0.0, None, unit, saw or f"{reports} report(s) over {domain}",
                         assumptions=f"each {unit}'s own device perturbs it (local DP); its {reports} report(s) "
                                     f"compose by basic composition; {domain} public; the collector's bit "
                                     f"counts are drawn in their law (oue.tally), not bit by bit",
                         relation="replace", local=True)
