"""The one door to OpenDP (Gaboardi et al., the OpenDP library): every DP mechanism in locsynth
draws its noise through the measurements built here, never from a seeded numpy generator.

OpenDP samples from the operating system's cryptographic randomness and makes no draw in
floating point: a float vector is rounded to a grid of 2^K and noised with an exact discrete
Laplace on that grid (Canonne, Kamath and Steinke, NeurIPS 2020), so the set of possible outputs
is the same for every input (Mironov, CCS 2012, showed how a textbook float sampler leaks).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

#: float inputs are rounded to multiples of 2^K before noising; OpenDP's privacy map counts the
#: rounding (it adds n * 2^K to an L1 sensitivity over n values), and so do the scales below
K = -40


@functools.lru_cache(maxsize=1)
def opendp() -> SimpleNamespace:
    """The parts of OpenDP used here, as ``opendp.prelude`` names them (``m`` the measurements),
    with the 'contrib' features enabled, imported on first use. Not the prelude itself: it also
    imports OpenDP's scikit-learn extras (0.77 s against 0.08 s)."""
    from opendp import measurements
    from opendp.domains import atom_domain, bitvector_domain, vector_domain
    from opendp.measures import max_divergence
    from opendp.metrics import discrete_distance, l1_distance, linf_distance
    from opendp.mod import enable_features

    enable_features("contrib")
    return SimpleNamespace(m=measurements, atom_domain=atom_domain, vector_domain=vector_domain,
                           l1_distance=l1_distance, linf_distance=linf_distance, max_divergence=max_divergence,
                           bitvector_domain=bitvector_domain, discrete_distance=discrete_distance)


def float_laplace(size: int, scale: float):
    """OpenDP's Laplace measurement on float vectors of ``size`` under the L1 distance."""
    dp = opendp()
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size),
                             dp.l1_distance(T=float), float(scale), k=K)


def integer_laplace(scale: float):
    """OpenDP's discrete Laplace (two-sided geometric) measurement on int64 vectors under L1."""
    dp = opendp()
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), float(scale))


def randomized_response(k: int, prob: float):
    """OpenDP's randomized response over the categories 0 .. k-1, keeping the value with ``prob``."""
    dp = opendp()
    return dp.m.make_randomized_response(list(range(int(k))), float(prob), T="i64")


def noisy_top_k(k: int, scale: float):
    """OpenDP's noisy top-k on int64 score vectors whose entries all move in one direction by at
    most 1 between neighbours (``linf_distance(monotonic=True)``), under pure DP: k rounds of
    report-noisy-max with exponential noise, i.e. permute-and-flip (privacy/topk.py)."""
    dp = opendp()
    return dp.m.make_noisy_top_k(dp.vector_domain(dp.atom_domain(T="i64")), dp.linf_distance(T="i64", monotonic=True),
                                 dp.max_divergence(), k=int(k), scale=float(scale))


def bit_flips(f: float):
    """OpenDP's randomized response on packed bit vectors (RAPPOR's permanent randomized response,
    Erlingsson et al., CCS 2014): each bit becomes 1 with probability f / 2, 0 with probability
    f / 2, and is kept otherwise. On a vector of zeros its bits are Bernoulli(f / 2), independent
    (privacy/oue.py draws its bits so). Called on ``bytes``; returns ``bytes`` of the same length."""
    dp = opendp()
    return dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), float(f))
