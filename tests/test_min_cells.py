"""synth/min_cells.py: every walk ends with at least the set's public minimum of locations."""

import numpy as np

from locsynth.synth.min_cells import walk_locations


def csr(lists):
    indptr = np.r_[0, np.cumsum([len(x) for x in lists])].astype(np.int64)
    return indptr, np.array([v for x in lists for v in x], np.int64)


def walk(cells, locations, touching, min_cells=2):
    loc_indptr, loc_indices = csr(locations)
    indptr, indices = csr(touching)
    out = np.empty(len(cells) + 8, np.int64)
    used, count = walk_locations(out, 0, np.array(cells, np.int64), loc_indptr, loc_indices, min_cells, indptr,
                                 indices)
    return out[:used].tolist(), count


def test_a_walk_of_one_state_gets_another_location_of_its_state_or_a_touching_one():
    got, count = walk([0], [[3, 4]], [[]])
    assert count == 2 and sorted(got) == [3, 4]
    got, count = walk([0], [[3], [5]], [[1], [0]])
    assert got == [3, 5] and count == 2


def test_states_that_all_stand_for_one_location_do_not_leave_a_walk_short():
    """A chain of 100 states that all stand for location 3 (small cells at a domain's edge mapped
    to the nearest allowed location), then one with location 9: the random tries give up, the
    breadth-first search finds 9; an island falls back to any other location of the space."""
    chain = [[3]] * 100 + [[9]]
    touching = [[1]] + [[i - 1, i + 1] for i in range(1, 100)] + [[99]]
    for _ in range(20):
        got, count = walk([0], chain, touching)
        assert got == [3, 9] and count == 2
    got, count = walk([0], [[3], [7]], [[], []])
    assert got == [3, 7]
    got, count = walk([0], [[3]], [[]])                      # no other location anywhere: left as it is
    assert got == [3] and count == 1
