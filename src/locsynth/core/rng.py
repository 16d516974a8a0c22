"""Per-user random streams that do not depend on how users are split between threads or workers
(DESIGN.md, randomness): the one home of both forms locsynth uses.

- :func:`user_words`, for numba kernels: user ``u`` of stream ``s`` is seeded by words of
  ``SeedSequence(seed, spawn_key=(s, u // USER_BLOCK))`` at offset ``u % USER_BLOCK``; inside a
  kernel each word seeds a SplitMix64 generator (Steele, Lea and Flood, OOPSLA 2014).
- :func:`user_uniforms`, for numpy code: the uniforms of ``SeedSequence(seed, spawn_key=(s, u))``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

USER_BLOCK = 4096

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
_TWO_M53 = 1.0 / 9007199254740992.0


def user_words(seed: int, stream: int, lo: int, hi: int, words: int = 1) -> np.ndarray:
    """(hi - lo, words) uint64 seeds of users ``lo .. hi - 1`` in ``stream``."""
    if hi <= lo:
        return np.zeros((0, words), np.uint64)
    first, last = lo // USER_BLOCK, (hi - 1) // USER_BLOCK
    out = np.concatenate([
        np.random.SeedSequence(seed, spawn_key=(stream, b)).generate_state(words * USER_BLOCK, np.uint64)
        for b in range(first, last + 1)]).reshape(-1, words)
    start = lo - first * USER_BLOCK
    return np.ascontiguousarray(out[start:start + hi - lo])


@njit(cache=True)
def next_u64(state):
    """The next word of the SplitMix64 generator whose state is ``state[0]``."""
    z = state[0] + _GOLDEN
    state[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def uniform(state):
    """Uniform in (0, 1), never 0 or 1."""
    return (np.float64(next_u64(state) >> _S11) + 0.5) * _TWO_M53


@njit(cache=True)
def below(state, n):
    """Uniform integer in 0 .. n - 1 (n < 2**53)."""
    return np.int64(uniform(state) * n)


def user_uniforms(seed: int, user: int, shape: tuple[int, ...], stream: int = 0) -> np.ndarray:
    """Uniforms of one user, from SeedSequence(seed) keyed by (stream, user) (DESIGN.md): the
    output does not depend on how users are split between workers."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream, user))).random(shape)
