"""PPMTF (paper 001 §3): worked examples, properties, the authors' PF factors, end to end on PF.

PPMTF's own mechanics are tested on a simulated city (always) and on PF (when its data are
present): tests taking ``sets`` or ``fitted`` run once per dataset. Tests of PF-specific facts
(the authors' files, factors and published numbers) need the PF data.
"""

from datetime import date

import numba
import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, TimeAxis, TraceSet
from locsynth.metrics.population import population_by_slot, tp_tv
from locsynth.privacy.plausible_deniability import buckets, pd_test
from locsynth.data.simulate import simulate
from locsynth.synth.ppmtf import PPMTF, PPMTFPlus
from locsynth.synth.ppmtf.generate import _draw, reconstruct
from locsynth.synth.ppmtf.gibbs import (Prior, draw_rows, draw_user_rows, gibbs_step, gram_sums, init_state, rmse,
                                        sample_hyperparameters)
from locsynth.metrics.transitions import keyed_transition_counts
from locsynth.metrics.visits import keyed_visit_counts
from locsynth.synth.ppmtf.tensors import build_tensors, select_cells

AUTHORS = "PPMTF_TK_alp200_mnt100_mnv100"
DATASETS = ["city", pytest.param("pf", marks=pytest.mark.slow)]


# -- full-matrix references of generate.py's kernels (the package computes MH rows only where a
# -- trace is; these build the whole matrix, for small spaces)

def mh_matrix(m, l: int) -> np.ndarray:
    """The full MH matrix Q_{n,l} (paper 001 eq. 5) of the user model ``m``."""
    p = m.piT[l]
    out = np.minimum(m.Q, p[None, :] * m.QT / p[:, None])
    np.fill_diagonal(out, 0.0)
    out[np.diag_indices_from(out)] = 1.0 - out.sum(axis=1)
    return out


@numba.njit(cache=True)
def _mh_row(Q, QT, p, a, out):
    """Row ``a`` of Q_{n,l} (pi_{n,l} = ``p``) into ``out``."""
    inv = 1.0 / p[a]
    total = 0.0
    for b in range(Q.shape[0]):
        f, r = Q[a, b], p[b] * QT[a, b] * inv
        v = f if f < r else r
        out[b] = v
        total += v
    total -= out[a]
    out[a] = 1.0 - total


@numba.njit(cache=True)
def generate_traces(Q, QT, piT, slots, uniforms, out, loglik):
    """Traces of one user from ``uniforms`` (n_traces, n_instants), one MH row at a time:
    locations into ``out`` and each trace's log p(y = M(n)) into ``loglik`` (paper 001 §3.5)."""
    n_traces, T = uniforms.shape
    row = np.empty(Q.shape[0])
    for k in range(n_traces):
        p0 = piT[slots[0]]
        a = _draw(p0, uniforms[k, 0])
        out[k, 0] = a
        ll = np.log(p0[a])
        for t in range(1, T):
            _mh_row(Q, QT, piT[slots[t]], a, row)
            b = _draw(row, uniforms[k, t])
            ll += np.log(row[b])
            a = b
            out[k, t] = a
        loglik[k] = ll


@pytest.fixture(scope="module")
def city_sets():
    """60 training and 60 test users of a simulated city: 20 x 20 grid, 24 hourly instants, 12 slots."""
    train, test = simulate(120, seed=1).split(0.5, seed=0)
    return {"train": train, "test": test}


@pytest.fixture(scope="module")
def city_fit(city_sets):
    """PPMTF fitted briefly on the city (10 sweeps: clusters of its users already beat uniform)."""
    return PPMTF(iterations=10, seed=0).fit(city_sets["train"])


@pytest.fixture(scope="module", params=DATASETS)
def sets(request):
    """Training and test sets of the simulated city, then of PF (skipped without its data)."""
    return request.getfixturevalue(f"{request.param}_sets")


def figure1():
    """s_1 of paper 001 Figure 1: (x2,1) (x3,2) (x4,3) (x3,5) (x4,6) (x5,7) (x5,9); slots of 3 instants."""
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h", "3h", ("00:00", "09:00"))
    grid = Grid(1, 5, (0.0, 0.01, 0.0, 0.05))
    instants = [1, 2, 3, 5, 6, 7, 9]
    locations = [2, 3, 4, 3, 4, 5, 5]
    return TraceSet.from_events([0] * 7, [t - 1 for t in instants], [x - 1 for x in locations],
                                pd.DataFrame({"user_id": [1]}), grid, axis)


def test_figure1_gives_the_tensors_of_figure3():
    ts = figure1()
    u, i, j, c = keyed_transition_counts(ts)
    r1 = {(int(a), int(b)): int(n) for a, b, n in zip(i, j, c)}
    assert r1 == {(1, 2): 1, (2, 3): 2, (3, 4): 1}        # r^I_{1,3,4} = 2 (1-based in the paper)
    u, i, l, c = keyed_visit_counts(ts)
    r2 = {(int(a), int(b)): int(n) for a, b, n in zip(i, l, c)}
    assert r2 == {(1, 0): 1, (2, 0): 1, (3, 0): 1, (2, 1): 1, (3, 1): 1, (4, 2): 2}   # r^II_{1,5,3} = 2


def test_tensors_match_the_authors_pf_files(pf_sets, pf_dir):
    t = build_tensors(pf_sets["train"], seed=0)
    theirs = pd.read_csv(pf_dir / "traintranstensor_TK_mnt100.csv")
    pos = t.transitions.r > 0
    mine = pd.DataFrame({"u": t.transitions.user[pos], "i": t.transitions.i[pos], "j": t.transitions.j[pos],
                         "r": t.transitions.r[pos]}).sort_values(["u", "i", "j"]).to_numpy()
    theirs = theirs.sort_values(["user_index", "poi_index_from", "poi_index_to"])
    # their file holds the counts before the r_max = 10 cap, which paper 001 §3.2 applies
    want = np.column_stack([theirs[["user_index", "poi_index_from", "poi_index_to"]].to_numpy(),
                            np.minimum(theirs["count"].to_numpy(), 10)])
    assert np.array_equal(mine, want)


def test_trimming_and_zero_cells_bounds():
    rng = np.random.default_rng(0)
    sizes = [3, 50, 120, 7]
    user = np.repeat(np.arange(4), sizes)
    cell = np.concatenate([np.sort(rng.choice(200, k, replace=False)) for k in sizes])
    count = rng.integers(1, 30, user.size)
    cells = select_cells(user, cell // 20, cell % 20, count, 4, 10, 20, lam=40, r_max=10, rho=90, seed=0, stream=0)
    got_user, got_cell = cells.user, cells.i.astype(int) * 20 + cells.j
    pos = cells.r > 0
    assert np.bincount(got_user[pos], minlength=4).tolist() == [3, 40, 40, 7]
    assert np.bincount(got_user[~pos], minlength=4).tolist() == [90, 90, 200 - 120, 90]   # all 80 zero cells
    assert cells.r.max() == 10
    for n in range(4):
        mine, theirs = got_cell[got_user == n], cell[user == n]
        assert np.unique(mine).size == mine.size
        assert np.isin(mine[pos[got_user == n]], theirs).all() and not np.isin(mine[~pos[got_user == n]], theirs).any()
    # user 1's cells depend on the seed and on user 1 only
    again = select_cells(user[3:53] - 1, cell[3:53] // 20, cell[3:53] % 20, count[3:53], 1, 10, 20, lam=40,
                         r_max=10, rho=90, seed=0, stream=0)
    assert not np.array_equal(again.i, cells.i[cells.offsets[0]:cells.offsets[1]])   # user 0 of `again` draws as user 0


def test_build_tensors_caps_counts_and_is_seeded(sets):
    """Each user keeps min(its positive cells, lam) of them, with counts min(count, r_max), and
    rho cells that are zero in its data; the same seed gives the same cells."""
    train = sets["train"]
    n, n_loc = train.n_users, train.space.n_locations
    a, b = build_tensors(train, lam=10, r_max=3, rho=50, seed=4), build_tensors(train, lam=10, r_max=3, rho=50, seed=4)
    raw = {"transitions": (keyed_transition_counts(train), n_loc), "visits": (keyed_visit_counts(train), train.time.n_slots)}
    caps_bind = {"lam": False, "r_max": False}
    for name, cells in (("transitions", a.transitions), ("visits", a.visits)):
        (u, i, j, c), n_j = raw[name]
        raw_key = (u.astype(np.int64) * n_loc + i) * n_j + j                   # sorted and unique
        key = (cells.user.astype(np.int64) * n_loc + cells.i) * n_j + cells.j
        pos = cells.r > 0
        at = np.minimum(np.searchsorted(raw_key, key), raw_key.size - 1)
        assert (raw_key[at[pos]] == key[pos]).all() and (cells.r[pos] == np.minimum(c[at[pos]], 3)).all()
        assert not (raw_key[at[~pos]] == key[~pos]).any()                      # zero cells are zero
        per_user = np.bincount(u, minlength=n)
        assert np.array_equal(np.bincount(cells.user[pos], minlength=n), np.minimum(per_user, 10))
        assert (np.bincount(cells.user[~pos], minlength=n) == 50).all()
        caps_bind["lam"] |= bool((per_user > 10).any())
        caps_bind["r_max"] |= bool((c > 3).any())
    assert caps_bind == {"lam": True, "r_max": True}                             # both caps were tested
    assert np.array_equal(a.transitions.i, b.transitions.i) and np.array_equal(a.visits.j, b.visits.j)
    other = build_tensors(train, lam=10, r_max=3, rho=50, seed=5)
    assert not np.array_equal(a.transitions.i, other.transitions.i)


@pytest.fixture(scope="module")
def authors_factors(pf_dir):
    d = pf_dir / AUTHORS
    return {k: np.loadtxt(d / f"modelparameter_Itr100_{k}.csv", delimiter=",") for k in "ABCD"}


@pytest.fixture(params=["city", pytest.param("authors", marks=pytest.mark.slow)])
def factors(request):
    """Factors of the city's fit, then the authors' PF factors (skipped without the PF data)."""
    if request.param == "city":
        return request.getfixturevalue("city_fit").factors_
    return request.getfixturevalue("authors_factors")


def test_mh_rows_sum_to_one_and_pi_is_stationary(factors):
    f = factors
    n_users, n_slots = f["A"].shape[0], f["D"].shape[0]
    for n in (0, n_users // 4, n_users - 1):
        m = reconstruct(f["A"][n], f["B"], f["C"], f["D"])
        assert np.allclose(m.Q.sum(axis=1), 1, atol=1e-12) and np.allclose(m.piT.sum(axis=1), 1, atol=1e-12)
        for l in (0, n_slots // 2 + 2, n_slots - 1):
            Q = mh_matrix(m, l)
            assert (Q >= 0).all() and np.abs(Q.sum(axis=1) - 1).max() < 1e-9
            assert np.abs(m.piT[l] @ Q - m.piT[l]).max() < 1e-9


def test_authors_log_likelihoods_are_reproduced(pf_sets, pf_dir, authors_factors):
    model = PPMTF.from_factors(pf_sets["train"], authors_factors)
    syn = pd.read_csv(pf_dir / AUTHORS / "syntraces_Itr100.csv").sort_values(["user", "trace_no", "time_slot"])
    locs = syn["poi_index"].to_numpy().reshape(-1, 30)[:40]
    steps = model.steps(locs, np.arange(30))
    ll = np.concatenate([model.logliks(int(n), steps, np.arange(q * 10, q * 10 + 10)) for q, n in enumerate(range(4))])
    assert np.allclose(ll, syn["loglikeli"].to_numpy()[29::30][:40], atol=1e-5)


def test_traces_from_the_authors_factors_match_their_traces(pf_sets, pf_dir, authors_factors):
    from locsynth.data.discretize import read_pf_synthetic

    model = PPMTF.from_factors(pf_sets["train"], authors_factors)
    ours = model.sample(traces_per_user=10, seed=3)
    theirs = read_pf_synthetic(pf_dir / AUTHORS / "syntraces_Itr100.csv", pf_sets["train"])
    between = tp_tv(population_by_slot(theirs), population_by_slot(ours))
    train_vs_test = tp_tv(population_by_slot(pf_sets["test"]), population_by_slot(pf_sets["train"]))
    assert between < train_vs_test            # 5000 traces each: much closer than two real halves
    assert between < 0.25


def test_row_order_is_a_stable_sort_of_each_block_by_target_row(sets, monkeypatch):
    """Every cell appears once, in its block, under its target row, users in order within a row;
    blocks respect their cell and user limits, and end only at a limit or a chunk's end."""
    import locsynth.synth.ppmtf.tensors as tensors

    t = build_tensors(sets["train"].select_users(np.arange(40)), lam=20, rho=40, seed=1)
    R1 = t.transitions
    # three users' cells on average: some blocks are cut by the cell limit, some by the user limit
    block_cells = int(3 * np.diff(R1.offsets).mean())
    monkeypatch.setattr(tensors, "BLOCK_CELLS", block_cells)
    monkeypatch.setattr(tensors, "BLOCK_USERS", 3)
    o = tensors.row_order(R1, R1.j, R1.i, t.n_locations)
    assert np.diff(o.block_user).max() <= 3 and o.chunks[-1] == o.block_user.size - 1
    chunk_ends = set(o.block_user[o.chunks].tolist())
    cut_by = set()
    for b in range(o.block_user.size - 1):
        u, v = o.block_user[b], o.block_user[b + 1]
        lo, hi = R1.offsets[u], R1.offsets[v]
        assert v - u == 1 or hi - lo <= block_cells
        if v not in chunk_ends:                     # a block stops only where adding user v would break a limit
            assert v - u == 3 or R1.offsets[v + 1] - lo > block_cells
            cut_by.add("users" if v - u == 3 else "cells")
        user = np.repeat(np.arange(u, v), np.diff(R1.offsets[u:v + 1]))
        want = sorted(zip(R1.j[lo:hi], user, R1.i[lo:hi], R1.r[lo:hi]), key=lambda cell: cell[0])
        got = [(row, o.block_user[b] + o.user[c], o.other[c], o.r[c])
               for row in range(t.n_locations) for c in range(o.starts[b, row], o.starts[b, row + 1])]
        assert [(int(a), int(b_), int(c), int(d)) for a, b_, c, d in got] == \
            [(int(a), int(b_), int(c), int(d)) for a, b_, c, d in want]
    assert cut_by == {"users", "cells"}


def _conditional_draw(P, b, alpha, mu, Lam, eps):
    """mean + L^-T eps of the precision Lambda + alpha P (float64, numpy only)."""
    prec = Lam + alpha * P
    mean = np.linalg.solve(prec, Lam @ mu + alpha * b)
    return mean + np.linalg.solve(np.linalg.cholesky(prec).T, eps)


@pytest.mark.parametrize("z", [4, 3])
def test_gibbs_rows_match_the_gaussian_conditional(sets, z):
    """The float32 Gram sums of every factor equal a float64 computation of the conditional's
    precision and mean (module docstring of gibbs), rows are drawn from that conditional, and the
    RMSE from the Gram sums equals a direct pass."""
    t = build_tensors(sets["train"].select_users(np.arange(30)), lam=20, rho=40, seed=1)
    f = init_state(t, z, np.random.default_rng(0)).factors
    R1, R2 = t.transitions, t.visits
    n1, n2 = R1.user, R2.user
    F1 = {"A": f["B"][R1.i] * f["C"][R1.j], "B": f["A"][n1] * f["C"][R1.j], "C": f["A"][n1] * f["B"][R1.i]}
    F2 = {"A": f["B"][R2.i] * f["D"][R2.j], "B": f["A"][n2] * f["D"][R2.j], "D": f["A"][n2] * f["B"][R2.i]}
    rows1 = {"A": n1, "B": R1.i, "C": R1.j}
    rows2 = {"A": n2, "B": R2.i, "D": R2.j}

    def want(name, row):
        P, b = np.zeros((z, z)), np.zeros(z)
        for F, rows, r in ((F1, rows1, R1.r), (F2, rows2, R2.r)):
            if name in F:
                sel = rows[name] == row
                P += F[name][sel].T @ F[name][sel]
                b += F[name][sel].T @ r[sel].astype(float)
        return P, b

    o, L = t.orders, t.n_locations
    got = {"B": tuple(x + y for x, y in zip(gram_sums(o["B1"], L, f["A"], f["C"]), gram_sums(o["B2"], L, f["A"], f["D"]))),
           "C": gram_sums(o["C"], L, f["A"], f["B"]),
           "D": gram_sums(o["D"], t.n_slots, f["A"], f["B"])}
    for name, (P, b) in got.items():
        for row in range(b.shape[0]):
            want_P, want_b = want(name, row)
            assert np.allclose(P[row], want_P, rtol=1e-5, atol=1e-5) and np.allclose(b[row], want_b, rtol=1e-5)
    mu, Lam = np.full(z, 0.1), np.eye(z) * 2
    P, b = got["C"]
    out = draw_rows(P, b, 3.0, mu, Lam, np.random.default_rng(7))
    eps = np.random.default_rng(7).standard_normal(b.shape)
    for row in range(3):
        assert np.allclose(out[row], _conditional_draw(P[row], b[row], 3.0, mu, Lam, eps[row]), atol=1e-8)
    # rows of A: Gram sums made and used inside the draw
    A = draw_user_rows(t, f, 3.0, mu, Lam, np.random.default_rng(7))
    eps = np.random.default_rng(7).standard_normal(A.shape)
    for n in range(t.n_users):
        assert np.allclose(A[n], _conditional_draw(*want("A", n), 3.0, mu, Lam, eps[n]), rtol=1e-4, atol=1e-5)
    state, error = gibbs_step(init_state(t, z, np.random.default_rng(0)), t, 200.0, Prior.default(z),
                              np.random.default_rng(3))
    assert error == pytest.approx(rmse(t, state.factors), rel=1e-5)


def test_hyperparameters_follow_the_normal_wishart_posterior():
    rng = np.random.default_rng(2)
    X = rng.normal([1.0, -2.0], [0.5, 2.0], size=(400, 2))
    prior = Prior.default(2)
    draws = [sample_hyperparameters(X, prior, rng) for _ in range(400)]
    n, xbar = 400, X.mean(axis=0)
    S = np.cov(X.T, bias=True)
    d = (prior.mu0 - xbar)[:, None]
    W = np.linalg.inv(np.linalg.inv(prior.W0) + n * S + prior.beta0 * n / (prior.beta0 + n) * d @ d.T)
    mean_lambda = np.mean([lam for _, lam in draws], axis=0)
    assert np.allclose(mean_lambda, (prior.nu0 + n) * W, rtol=0.05, atol=0.01)       # E[Wishart] = nu W
    assert np.allclose(np.mean([mu for mu, _ in draws], axis=0), n * xbar / (n + prior.beta0), atol=0.02)


class TableModel:
    """A model whose log-likelihoods are a given table (trace x user)."""

    def __init__(self, table):
        self.table, self.n_users = np.asarray(table), np.asarray(table).shape[1]

    def steps(self, locs, slots):
        return None

    def logliks(self, m, steps, rows=None):
        col = self.table[:, m]
        return col if rows is None else col[rows]


def test_pd_test_counts_by_hand():
    # eta = 1: buckets floor(-ll). Trace 0 from user 0 (ll -2.5 -> bucket 2): users 1 and 3 share it.
    table = [[-2.5, -2.1, -3.0, -2.9, -7.0],
             [-9.0, -1.2, -1.9, -0.5, -1.0]]        # trace 1 from user 1 (bucket 1): user 2 (-1.9), user 4 (-1.0)
    source = np.array([0, 1])
    res = pd_test(TableModel(table), np.zeros((2, 1)), np.zeros(1), source, k=3, eta=1.0)
    assert res.counts.tolist() == [3, 3] and res.passed.tolist() == [True, True]
    assert buckets(np.array([-1.0, -0.999]), 1.0).tolist() == [1, 0]   # e^-(i+1) < p <= e^-i
    zero = buckets(np.array([-np.inf, np.nan, -1e300]), 1.0)             # p = 0 matches no p > 0
    assert zero[0] == zero[1] and zero[0] not in buckets(np.array([-1e300, -1e18, 0.0]), 1.0)
    res = pd_test(TableModel(table), np.zeros((2, 1)), np.zeros(1), source, k=4, eta=1.0)
    assert res.pass_rate == 0.0
    with pytest.raises(InputError, match="k = 9 is larger than the 5 training users"):
        pd_test(TableModel(table), np.zeros((2, 1)), np.zeros(1), source, k=9)


def test_clamped_row_sums_do_not_depend_on_the_block_of_rows():
    """The normalisers of Q*_n add each row's terms in the order of j whatever the scratch's rows
    (generate.row_block), and equal a plain float64 sum of max(G, phi)."""
    from locsynth.synth.ppmtf.generate import clamped_row_sums, row_block

    rng = np.random.default_rng(0)
    for L in (37, 400, 1000):
        BaT32 = rng.random((16, L)).astype(np.float32)
        C32 = (rng.random((L, 16)) - 0.3).astype(np.float32)
        sums = []
        for rows in (8, row_block(L), 256):
            out = np.empty(L)
            clamped_row_sums(BaT32, C32, 1e-3, out, np.empty((rows, L), np.float32))
            sums.append(out)
        assert np.array_equal(sums[0], sums[1]) and np.array_equal(sums[1], sums[2])
        G = BaT32.T.astype(np.float64) @ C32.T.astype(np.float64)
        assert np.allclose(sums[0], np.maximum(G, 1e-3).sum(axis=1), rtol=1e-5)
    assert row_block(1000) == 16 and row_block(100) == 163 and row_block(5000) == 8 and row_block(20) == 256


def test_blocked_draw_is_the_inverse_cdf():
    """generate._draw (eight entries at a time) picks the location a plain inverse CDF picks, and
    never one without mass, on sizes around its block of eight, with zeros and with mass in one entry."""
    from locsynth.synth.ppmtf.generate import _draw

    rng = np.random.default_rng(0)
    for L in (1, 7, 8, 9, 17, 1000):
        for _ in range(300):
            p = rng.random(L) ** 4
            p[rng.random(L) < 0.4] = 0.0
            if p.sum() == 0 or rng.random() < 0.1:
                p[:] = 0.0
                p[rng.integers(L)] = 1.0
            for u in (0.0, rng.random(), 1.0 - 1e-16):
                c = np.cumsum(p)
                ref = min(int(np.searchsorted(c, u * c[-1], side="right")), L - 1)
                ref = ref if p[ref] > 0 else int(np.flatnonzero(p)[-1])
                assert _draw(p, u) == ref


def test_pd_buckets_in_the_kernel_equal_the_reference_buckets():
    from locsynth.synth.ppmtf.pdtest import _bucket

    ll = np.array([0.0, -0.5, -1.0, -1.0 - 1e-12, -37.2, -1e300, -np.inf, np.nan, 3.0])
    for eta in (1.0, 0.3, 2.0):
        assert [_bucket(x, eta) for x in ll] == buckets(ll, eta).tolist()


@pytest.mark.slow
def test_scalable_pd_test_equals_the_full_matrix_reference(city_fit, monkeypatch):
    """pdtest.pd_test_factors (a block of candidates at a time, float32 products, stays from the
    factors) gives the counts of the reference pd_test (each user's full MH matrices through
    StepIndex), and its own log-likelihoods to the float32 rounding of its products."""
    from locsynth.synth.ppmtf import pdtest
    from locsynth.synth.ppmtf.model import _trace_matrix

    monkeypatch.setattr(pdtest, "CANDIDATE_BLOCK", 8)         # 40 candidates: 5 blocks, for the early stop
    model = city_fit
    syn = model.sample(traces_per_user=2, seed=4)
    locs, slots, source = _trace_matrix(syn)
    T, n_slots, z = locs.shape[1], model.time_.n_slots, model.rank
    kw = dict(k=3, eta=2.0, candidates=40, seed=3)
    ref = pd_test(model, locs, slots, source, **kw)
    exact = pdtest.pd_test_factors(model.factors_, locs, slots, source, n_slots, early_stop=False, **kw)
    assert np.array_equal(exact.candidates, ref.candidates)
    assert np.array_equal(exact.counts, ref.counts) and np.array_equal(exact.passed, ref.passed)
    assert 0 < ref.passed.sum() < ref.passed.size and ref.counts.max() > kw["k"]     # not a trivial outcome
    # a move's probability has two float32 parts: an R^I entry G[a, b] or G[b, a] (a dot product of
    # z terms, each rounded from float64: relative error about (z + 2) 2^-24 when the terms do not
    # cancel) and a normaliser (float64 sums of such entries); the rest is float64. So |error of
    # log p| <= 2 (T - 1) (z + 2) 2^-24 = 5e-5 here (seen: 4e-6), for moves and for stays of
    # probability >= 1/2 (1 - the moves' sum), as the traces' own models mostly give. A relative
    # perturbation of 1e-4 of A moves these log-likelihoods by 1e-2.
    assert np.allclose(exact.loglik, ref.loglik, rtol=0, atol=2 * (T - 1) * (z + 2) * 2.0 ** -24)
    # with the early stop a passing trace stops counting at k: same verdicts, failing counts exact
    early = pdtest.pd_test_factors(model.factors_, locs, slots, source, n_slots, early_stop=True, **kw)
    assert np.array_equal(early.passed, ref.passed) and np.array_equal(early.loglik, exact.loglik)
    assert np.array_equal(early.counts[~ref.passed], ref.counts[~ref.passed])
    assert (early.counts[ref.passed] >= kw["k"]).all() and (early.counts <= ref.counts).all()
    assert (early.counts < ref.counts).any()                   # some traces did stop early
    # the model's pd_test takes the traces' own log-likelihoods from generation
    assert np.array_equal(model.pd_test(syn, early_stop=False, **kw).counts, ref.counts)


def test_epsilon_of_appendix_f():
    eps = PPMTF(alpha=0.4).epsilon()
    assert eps["location"] == pytest.approx(45.6)                   # paper 001 App. F.3
    assert PPMTF(alpha=1.0, lam=100, rho=1000, r_max=10).epsilon()["trace"] == 2 * 300 * 100


@pytest.fixture(scope="module")
def pf_fit(pf_sets):
    return PPMTF(seed=0).fit(pf_sets["train"])


@pytest.fixture(scope="module", params=DATASETS)
def fitted(request):
    """(a fitted PPMTF, its training and test sets): the simulated city, then PF."""
    return request.getfixturevalue(f"{request.param}_fit"), request.getfixturevalue(f"{request.param}_sets")


def test_end_to_end_on_pf(pf_fit, pf_sets):
    from locsynth.evaluation.evaluate import evaluate

    syn = pf_fit.sample(traces_per_user=10, seed=1)
    m = evaluate(pf_sets["train"], pf_sets["test"], syn, sglt=False).metrics
    assert m["tp_tv"]["synthetic"] <= 0.44 and m["tp_tv_top50"]["synthetic"] <= 0.14
    assert m["reid_rate"]["synthetic"] <= 0.03 and m["mia_advantage"]["synthetic"] <= 0.06
    assert m["tp_tv"]["synthetic"] < m["tp_tv"]["uniform"]
    pd_result = pf_fit.pd_test(syn, k=10, eta=1.0)
    assert 0.1 <= pd_result.pass_rate <= 0.3            # about a fifth, as the authors' C++ (0.206)
    assert pf_fit.rmse_[-1] < pf_fit.rmse_[0]


def test_same_seed_same_output_whatever_the_threads(sets):
    small = sets["train"].select_users(np.arange(60))
    first = PPMTF(iterations=3, seed=5).fit(small)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        second = PPMTF(iterations=3, seed=5).fit(small)
    finally:
        numba.set_num_threads(before)
    for k in "ABCD":
        assert np.array_equal(first.factors_[k], second.factors_[k])
    a, b = first.sample(traces_per_user=2, seed=9), second.sample(traces_per_user=2, seed=9)
    assert np.array_equal(a.loc, b.loc)
    # a user's traces do not depend on which other users were generated with it
    assert np.array_equal(first.sample(users=[7], seed=9).loc, a.select_users([14]).loc)


def test_save_load_round_trip(fitted, tmp_path):
    model, _ = fitted
    model.save(tmp_path / "m")
    back = PPMTF.load(tmp_path / "m")
    for k in "ABCD":
        assert np.array_equal(back.factors_[k], model.factors_[k])
    assert np.array_equal(back.sample(users=[3, 4], seed=2).loc, model.sample(users=[3, 4], seed=2).loc)
    assert back.get_params() == model.get_params()


def test_ppmtf_plus_virtual_users_and_homes(sets):
    model = PPMTFPlus(iterations=5, seed=1).fit(sets["train"])
    n, T = 200, 2 * model.time_.instants_per_day
    syn = model.sample(n, days=2, seed=0, home_regions=True)
    assert syn.n_users == n and (syn.users["source"] == -1).all() and syn.n_events == n * T
    home = syn.users["home"].to_numpy()
    at_home = (syn.loc.reshape(n, T)[:, 0] == home).mean()
    by_chance = (model.sample(n, days=2, seed=0).loc.reshape(n, T)[:, 0] == home).mean()
    # a trace starts from pi of the first slot, where the home's visit count is raised by 20: far
    # above the same users' chance (about 0.4 on the city, 0.65 on PF, against about 0.01). Later
    # instants are not tested: MH only moves where Q* proposes, so the boost of the last slot
    # barely brings users home (a few percent at the next day's first instant, on both sets).
    assert at_home > 0.25 and at_home > 10 * max(by_chance, 0.01)
    with pytest.raises(InputError, match="virtual users"):  # no training rows to pick
        model.sample(users=[1])


def test_sample_length_in_instants_and_cluster_metric(fitted):
    from locsynth.evaluation.evaluate import evaluate

    model, sets = fitted
    T = model.time_.instants_per_day * 3 // 2                                # a day and a half
    syn = model.sample(instants=T, users=[0, 1], seed=0)
    assert (syn.counts() == T).all() and syn.t.max() == T - 1
    full = model.sample(traces_per_user=10, seed=1)
    m = evaluate(sets["train"], sets["test"], full, attacks=(), sglt=False, user_factors=model.factors_["A"]).metrics
    assert m["cluster_tv"]["synthetic"] < m["cluster_tv"]["uniform"]


def test_scalable_generation_equals_the_full_matrix_reference(fitted):
    """sample_users (MH rows along the path, float32 normalisers) gives the traces of the
    full-matrix reference (mh_matrix / generate_traces) and their log-likelihoods to 1e-6."""
    from locsynth.core.rng import user_uniforms

    model, _ = fitted
    T = model.time_.instants_per_day
    syn = model.sample(traces_per_user=3, users=[5, 17], seed=9)
    slots = model.time_.slot(np.arange(T)).astype(np.int64)
    for q, n in enumerate([5, 17]):
        m = model.user_model(n)
        out, ll = np.empty((3, T), np.int64), np.empty(3)
        generate_traces(m.Q, m.QT, m.piT, slots, user_uniforms(9, n, (3, T), 0), out, ll)
        assert np.array_equal(syn.loc.reshape(-1, T)[3 * q:3 * q + 3], out)
        assert np.allclose(syn.users["loglik"].to_numpy()[3 * q:3 * q + 3], ll, atol=1e-6)


def test_checkpoint_resumes_to_the_uninterrupted_result(sets, tmp_path):
    small = sets["train"].select_users(np.arange(40))
    straight = PPMTF(iterations=4, rho=50, seed=2).fit(small)
    PPMTF(iterations=2, rho=50, seed=2).fit(small, checkpoint=tmp_path / "ck")       # "interrupted" after 2
    seen = []
    resumed = PPMTF(iterations=4, rho=50, seed=2).fit(small, checkpoint=tmp_path / "ck",
                                                     progress=lambda it, total, err: seen.append(it))
    assert seen == [2, 3, 4]                                    # sweeps 1-2 were not run again
    for k in "ABCD":
        assert np.array_equal(straight.factors_[k], resumed.factors_[k])
    assert resumed.rmse_ == straight.rmse_
    with pytest.raises(InputError, match="other training data or hyperparameters"):
        PPMTF(iterations=4, rho=60, seed=2).fit(small, checkpoint=tmp_path / "ck")
    (tmp_path / "ck" / "state.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="damaged"):
        PPMTF(iterations=4, rho=50, seed=2).fit(small, checkpoint=tmp_path / "ck")
