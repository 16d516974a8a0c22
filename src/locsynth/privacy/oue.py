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
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..ledger import Ledger, Spend
from ..validation import check_epsilon
from . import _opendp

#: the probability that a value's own bit is reported as 1
P = 0.5
#: bits per call of OpenDP's sampler (a long draw is made in pieces, each one packed vector)
PIECE = 1 << 22


def flip_probability(epsilon: float) -> float:
    """q = 1 / (e^epsilon + 1): the probability that any other bit is reported as 1."""
    e = math.exp(-check_epsilon(epsilon))
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


def record(ledger: Ledger, epsilon: float, *, reports: int = 1, unit: str = "trace", saw: str = "",
           domain: str = "its values") -> Spend:
    """Record ``reports`` OUE reports per ``unit`` at ``epsilon`` each as one local spend of their
    basic composition: reports x epsilon, any two values of one unit's data (``domain`` says over
    what the reports range, which is public)."""
    eps = oue_epsilon(P, flip_probability(epsilon))
    return ledger.record("oue", int(reports) * eps, 0.0, None, unit, saw or f"{reports} report(s) over {domain}",
                         assumptions=f"each {unit}'s own device perturbs it (local DP); its {reports} report(s) "
                                     f"compose by basic composition; {domain} public",
                         relation="replace", local=True)
