from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, POISpace
from locsynth.data.categories import TOP_LEVEL, TOP_LEVELS, top_level
from locsynth.privacy.privelet import generalized_sensitivity
from locsynth.privacy.hierarchy import Hierarchy
from locsynth.core.geo import haversine_m


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


def test_snap_clamps_into_a_grid_and_finds_the_nearest_poi():
    """What planar Laplace asks of a space: a grid's cell (outside points clamped into the edge
    cells), a POI space's nearest POI (on the tangent plane, against the great-circle argmin)."""
    grid = Grid(4, 5, (35.0, 35.4, 139.0, 139.5))
    lat, lon = np.array([35.05, 34.0, 36.0, 35.39, 35.2]), np.array([139.05, 138.0, 140.0, 139.6, 139.25])
    assert grid.snap(lat, lon).tolist() == [0, 0, 19, 19, 12]
    inside = [0, 4]
    assert grid.snap(lat, lon).dtype == np.int64
    assert (grid.snap(lat[inside], lon[inside]) == grid.locate(lat[inside], lon[inside])).all()
    rng = np.random.default_rng(0)
    pois = POISpace(35 + rng.random(40) * 0.1, 139 + rng.random(40) * 0.1)
    qlat, qlon = 35 + rng.random(200) * 0.12 - 0.01, 139 + rng.random(200) * 0.12 - 0.01
    truth = haversine_m(qlat[:, None], qlon[:, None], pois.lat[None], pois.lon[None]).argmin(axis=1)
    assert (pois.snap(qlat, qlon) == truth).mean() > 0.99


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


def _leaf_paths_reach_root(h: Hierarchy) -> bool:
    node = np.arange(h.n_leaves)
    for _ in range(h.n_nodes):
        node = np.where(node == h.root, node, h.parent[node])
    return bool((node == h.root).all())


def test_point_quadtree_shape():
    rng = np.random.default_rng(7)
    n = 100
    h = Hierarchy.points(rng.uniform(40.6, 40.9, n), rng.uniform(-74.1, -73.8, n))
    assert h.n_leaves == n and h.root == n and h.parent[n] == -1
    assert (h.fanout[:n] == 0).all()
    internal = h.fanout[n:]
    assert (internal >= 2).all() and (internal <= 4).all()
    assert _leaf_paths_reach_root(h)
    leaf_depth = h.depth[:n]
    log4 = np.log(n) / np.log(4)
    assert log4 - 1 <= leaf_depth.mean() <= log4 + 1.5 and leaf_depth.max() <= np.ceil(np.log2(n)) + 1


def test_point_quadtree_splits_at_medians():
    lat = np.array([0.0, 0.0, 1.0, 1.0])
    lon = np.array([0.0, 1.0, 0.0, 1.0])
    h = Hierarchy.points(lat, lon)
    assert h.n_nodes == 5 and (h.parent[:4] == 4).all()
    h = Hierarchy.points(np.arange(8.0), np.zeros(8))
    top = np.arange(8)
    while (h.depth[top] > 1).any():
        top = np.where(h.depth[top] > 1, h.parent[top], top)
    assert h.fanout[h.root] == 2 and len(set(top[:4])) == len(set(top[4:])) == 1 and top[0] != top[4]


def test_point_quadtree_coincident_points_terminate():
    for n in (1, 2, 7, 64):
        h = Hierarchy.points(np.full(n, 35.0), np.full(n, 139.0))
        assert h.n_leaves == n and _leaf_paths_reach_root(h)
        assert (h.fanout[n:] >= min(n, 2)).all() and h.depth.max() <= np.ceil(np.log2(max(n, 2)))
    with pytest.raises(InputError):
        Hierarchy.points(np.zeros(0), np.zeros(0))


def test_pois_without_categories_get_the_point_quadtree():
    rng = np.random.default_rng(1)
    space = POISpace(rng.random(20), rng.random(20))
    h = space.hierarchy()
    assert h.n_leaves == 20 and (h.fanout[20:] >= 2).all() and h.depth.max() >= 2
    assert space.top_category() is None
    assert Grid(4, 4, (0.0, 1.0, 0.0, 1.0)).hierarchy().fanout[16] == 4


FOURSQUARE = np.array(["Subway", "Train Station", "Deli / Bodega", "Bar", "Home (private)",
                       "Residential Building (Apartment / Condo)", "Office", "Park", "Subway", "Pizza Place"],
                      dtype=object)


def test_foursquare_names_get_three_levels():
    space = POISpace(np.arange(10.0), np.arange(10.0), category=FOURSQUARE)
    h = space.hierarchy()
    assert (h.depth[:10] == 3).all() and h.depth.max() == 3
    assert generalized_sensitivity(h) <= 4
    subway, train, deli, pizza = 0, 1, 2, 9
    assert h.parent[subway] == h.parent[8] != h.parent[train]
    assert h.parent[h.parent[subway]] == h.parent[h.parent[train]]
    assert h.parent[h.parent[deli]] == h.parent[h.parent[pizza]] != h.parent[h.parent[subway]]
    assert h.fanout[h.root] == 6


def test_unknown_names_fall_back_to_two_levels():
    cats = np.append(FOURSQUARE[:3], "no such category")
    space = POISpace(np.arange(4.0), np.arange(4.0), category=cats)
    assert top_level(cats) is None
    assert (space.hierarchy().depth[:4] == 2).all()
    assert space.top_category().tolist() == cats.tolist()


def test_top_category_values():
    space = POISpace(np.arange(10.0), np.arange(10.0), category=FOURSQUARE)
    assert space.top_category().tolist() == [
        "Travel & Transport", "Travel & Transport", "Food", "Nightlife Spot", "Residence", "Residence",
        "Professional & Other Places", "Outdoors & Recreation", "Travel & Transport", "Food"]
    assert top_level(["Ramen / Noodle House", "Ramen /  Noodle House", "Food"]).tolist() == ["Food"] * 3
    assert top_level([None]) is None and top_level([]).shape == (0,)
    assert len(TOP_LEVELS) == 10 and all(TOP_LEVEL[t] == t for t in TOP_LEVELS)
    assert set(TOP_LEVEL.values()) == set(TOP_LEVELS)


def test_tokyo_names_are_mapped():
    names = ["Electronics Store", "Hobby Shop", "Record Shop", "Platform", "Airport Terminal", "Tech Startup",
             "Convention Center", "Ramen /  Noodle House", "Japanese Restaurant", "Convenience Store"]
    assert top_level(names).tolist() == [
        "Shop & Service", "Shop & Service", "Shop & Service", "Travel & Transport", "Travel & Transport",
        "Professional & Other Places", "Professional & Other Places", "Food", "Food", "Shop & Service"]


def test_every_nyc_category_is_mapped():
    folder = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "foursquare-nyc-tsmc2014"
    if not folder.is_dir():
        pytest.skip(f"TSMC NYC data not found at {folder}")
    names = pd.concat([pd.read_csv(folder / f, usecols=["POI_catname"]) for f in ("NYC_val.csv", "NYC_test.csv")])
    distinct = sorted(names["POI_catname"].unique())
    assert len(distinct) >= 200
    assert [n for n in distinct if n not in TOP_LEVEL] == []
    assert top_level(names["POI_catname"].to_numpy()) is not None
