"""Cluster-specific population distributions (paper 001 §4.3 (d))."""

from dataclasses import replace

import numpy as np
import pytest

from helpers import traceset
from locsynth import InputError
from locsynth.data.discretize import read_pf_synthetic
from locsynth.metrics.clusters import cluster_population, cluster_population_tv, clusters_from_factors


def test_clusters_from_factors_by_hand():
    A = np.column_stack([np.arange(10.0), np.arange(10.0)[::-1] * 3, np.zeros(10), np.ones(10)])
    c = clusters_from_factors(A)
    # 90th percentile of 0..9 is 8.1: only 9 is strictly above; the scale of a column does not matter
    assert [x.tolist() for x in c] == [[9], [0], [], []]        # a zero or constant column selects nobody
    c = clusters_from_factors(A, top=0.2)                        # 80th percentile 7.2
    assert c[0].tolist() == [8, 9] and c[1].tolist() == [0, 1]
    for bad in (0, 1, 1.5):
        with pytest.raises(InputError, match="top must be a fraction"):
            clusters_from_factors(A, top=bad)
    with pytest.raises(InputError, match="must be a \\(n_users, z\\) matrix"):
        clusters_from_factors(np.arange(5.0))


def test_clusters_match_the_percentile_rule():
    A = np.random.default_rng(0).normal(size=(500, 16))
    for k, rows in enumerate(clusters_from_factors(A)):
        col = A[:, k] / np.linalg.norm(A[:, k])
        assert rows.tolist() == np.flatnonzero(col > np.percentile(col, 90)).tolist() and rows.size == 50


def train_set():
    # 1 x 3 grid; user 0 at 0, 0, 1 ; user 1 at 2 ; user 2 at 1, 1
    return traceset([[(0, 0), (1, 0), (2, 1)], [(0, 2)], [(0, 1), (1, 1)]])


def test_cluster_population_by_hand():
    ts = train_set()
    assert np.allclose(cluster_population(ts, [0]), [2 / 3, 1 / 3, 0])
    assert np.allclose(cluster_population(ts, [0, 1]), [2 / 4, 1 / 4, 1 / 4])
    assert np.allclose(cluster_population(ts, np.array([], dtype=int)), 1 / 3)        # nobody: uniform


def test_cluster_population_tv_by_hand():
    train = train_set()
    # trace numbers 0 and 1 generated from users 0, 1, 2
    syn = traceset([[(0, 0), (1, 0), (2, 1)], [(0, 1)], [(0, 2), (1, 2)],          # trace_no 0
                    [(0, 1), (1, 1)], [(0, 2)], [(0, 2)]],                           # trace_no 1
                   synthetic=[(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)])
    tv = cluster_population_tv(train, syn, [np.array([0]), np.array([0, 1]), np.array([2])])
    # cluster {0}: train (2/3, 1/3, 0); trace 0 identical (TV 0), trace 1 (0, 1, 0): TV 2/3 -> mean 1/3
    # cluster {0, 1}: train (1/2, 1/4, 1/4); trace 0 (1/2, 1/2, 0): TV 1/4; trace 1 (0, 2/3, 1/3): TV 1/2
    # cluster {2}: train (0, 1, 0); both traces at 2 only: TV 1
    assert np.allclose(tv, [1 / 3, 3 / 8, 1.0])
    # without trace numbers everything is one set: cluster {0} pools (2/5, 3/5, 0): TV 4/15
    pooled = replace(syn, users=syn.users.drop(columns="trace_no"))
    assert cluster_population_tv(train, pooled, [np.array([0])])[0] == pytest.approx(4 / 15)
    # a cluster whose users generated nothing is compared with the uniform distribution
    only0 = syn.select_users([0])
    assert cluster_population_tv(train, only0, [np.array([2])])[0] == pytest.approx(2 / 3)


def test_cluster_population_tv_needs_sources():
    with pytest.raises(InputError, match="needs a synthetic TraceSet with a source column"):
        cluster_population_tv(train_set(), train_set(), [np.array([0])])


def test_pf_clusters_are_preserved(pf_sets, pf_dir):
    """PPMTF's synthetic traces of a cluster's users are closer to the cluster's training
    distribution than the whole training population is (paper 001 Fig. 8, in numbers)."""
    folder = pf_dir / "PPMTF_TK_alp200_mnt100_mnv100"
    train = pf_sets["train"]
    syn = read_pf_synthetic(folder / "syntraces_Itr100.csv", train)
    A = np.loadtxt(folder / "modelparameter_Itr100_A.csv", delimiter=",")
    assert A.shape == (train.n_traces, 16)
    clusters = clusters_from_factors(A)
    assert [c.size for c in clusters] == [50] * 16
    tv = cluster_population_tv(train, syn, clusters)
    everyone = cluster_population(train, np.arange(train.n_traces))
    tv_all = np.array([0.5 * np.abs(cluster_population(train, c) - everyone).sum() for c in clusters])
    assert tv.mean() < tv_all.mean() - 0.05 and (tv < tv_all).mean() >= 0.75
    # a null with the same sampling noise (1500 events per trace number): the synthetic traces
    # of 50 users outside the cluster
    rng = np.random.default_rng(0)
    sets = syn.by_trace_number()
    null = []
    for c in clusters:
        others = np.sort(rng.choice(np.setdiff1d(np.arange(train.n_traces), c), c.size, replace=False))
        p = cluster_population(train, c)
        null.append(np.mean([0.5 * np.abs(p - cluster_population(s, np.flatnonzero(np.isin(s.users["source"], others))))
                             .sum() for s in sets]))
    assert tv.mean() < np.mean(null) - 0.1
