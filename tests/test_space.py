import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, POISpace
from locsynth.space import haversine_m


def test_grid_numbering_matches_pf_cells(pf_dir):
    cells = pd.read_csv(pf_dir / "POI_TK.csv")
    grid = Grid(20, 20, (35.65, 35.75, 139.68, 139.80))
    assert np.allclose(grid.lat, cells["y"]) and np.allclose(grid.lon, cells["x"])
    assert (grid.row == cells["y_id"]).all() and (grid.col == cells["x_id"]).all()
    assert (grid.locate(cells["y"], cells["x"]) == cells["poi_id"]).all()


def test_grid_locate_edges_and_outside():
    grid = Grid(2, 4, (0.0, 2.0, 0.0, 4.0))
    ids = grid.locate(np.array([0.0, 1.99, 2.0, 2.01, -0.01, 1.0]), np.array([0.0, 3.99, 4.0, 1.0, 1.0, 2.5]))
    # south-west corner -> 0; north-east inside -> 7; the north/east edges belong to the last cells
    assert ids.tolist() == [0, 7, 7, -1, -1, 6]


def test_grid_rejects_bad_box():
    with pytest.raises(InputError, match="bounding box"):
        Grid(2, 2, (1.0, 0.0, 0.0, 1.0))
    with pytest.raises(InputError, match="at least 1 x 1"):
        Grid(0, 2, (0.0, 1.0, 0.0, 1.0))


def test_haversine_one_degree_of_latitude():
    assert haversine_m(0.0, 0.0, 1.0, 0.0) == pytest.approx(111_195, rel=1e-4)
    grid = Grid(20, 20, (35.65, 35.75, 139.68, 139.80))
    # neighbouring cells along a column are 0.005 degrees of latitude apart
    assert grid.distance_m(0, 20) == pytest.approx(0.005 * 111_195, rel=1e-3)


def test_top_visited_pois_ranks_by_visits_then_id():
    pts = pd.DataFrame({"venue": ["b", "a", "c", "a", "b", "d"], "lat": [1.0, 2, 3, 2, 1, 4],
                        "lon": [1.0, 2, 3, 2, 1, 4], "category": ["x", "y", "z", "y", "x", "w"]})
    space = POISpace.top_visited(pts, 3)
    assert space.name.tolist() == ["a", "b", "c"]   # a and b tie at 2 visits; c wins the tie at 1 over d
    assert space.category.tolist() == ["y", "x", "z"]
    assert space.locate(None, None, np.array(["c", "d", "a"])).tolist() == [2, -1, 0]


def test_pois_need_venues():
    with pytest.raises(InputError, match="venue"):
        POISpace.top_visited(pd.DataFrame({"lat": [1.0], "lon": [1.0]}), 5)
