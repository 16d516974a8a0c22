"""Discrete spaces: a regular grid of cells or a set of POIs (paper 001 §2.1, the set X).

A space maps coordinates (or venue ids) to location ids ``0 .. n_locations - 1`` and gives
every location a representative point (a cell centre or the POI itself), so that distances in
metres can be computed between locations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.validation import check_memory, size_text
from ..core.geo import haversine_m
from ..privacy.hierarchy import Hierarchy


def _foursquare_top_level(category) -> np.ndarray | None:
    from .categories import top_level
    return top_level(category)


@dataclass(frozen=True, eq=False)
class Space:
    """A finite set of locations with one representative point each.

    Attributes
    ----------
    lat, lon : ndarray of shape (n_locations,)
        Representative point of each location, in degrees.
    category : ndarray of shape (n_locations,) or None
        Optional category label of each location (e.g. a Foursquare venue category).
    name : ndarray of shape (n_locations,) or None
        Optional name or original id of each location (e.g. a venue id).
    """

    lat: np.ndarray
    lon: np.ndarray
    category: np.ndarray | None = None
    name: np.ndarray | None = None
    kind: str = field(default="pois", init=False)
    #: where a location may be, by public knowledge (a waterway, a road network, a land-use map:
    #: data/domain.py): bool of shape (n_locations,), None where every location may be
    allowed = None
    #: that knowledge, in words (the card and the frame name it); None without a domain
    domain = None

    @property
    def n_locations(self) -> int:
        return int(self.lat.shape[0])

    @property
    def n_allowed(self) -> int:
        """How many locations the public domain allows (all of them without one)."""
        return self.n_locations if self.allowed is None else int(np.count_nonzero(self.allowed))

    def allowed_locations(self) -> np.ndarray:
        """The ids of the locations the public domain allows, int64 (all without one)."""
        return np.arange(self.n_locations) if self.allowed is None else np.flatnonzero(self.allowed)

    def outside(self, loc) -> np.ndarray:
        """Whether each location id is outside the public domain (False everywhere without one)."""
        loc = np.asarray(loc)
        if self.allowed is None:
            return np.zeros(loc.shape, bool)
        return ~self.allowed[loc]

    def distance_m(self, i, j) -> np.ndarray:
        """Distance in metres between locations ``i`` and ``j`` (arrays broadcast)."""
        return haversine_m(self.lat[i], self.lon[i], self.lat[j], self.lon[j])

    def locate(self, lat: np.ndarray, lon: np.ndarray, venue: np.ndarray | None = None) -> np.ndarray:
        """Location id of each point, or -1 where the point is not in the space."""
        raise NotImplementedError

    def snap(self, lat, lon) -> np.ndarray:
        """The location each point falls in, as int64: the nearest location's point (by a k-d tree
        on the local tangent plane); a grid's cell, points outside clamped into the grid."""
        from scipy.spatial import cKDTree

        lat, lon = np.asarray(lat, np.float64), np.asarray(lon, np.float64)
        scale = np.cos(np.radians(np.median(self.lat)))
        tree = cKDTree(np.column_stack([self.lat, self.lon * scale]))
        return tree.query(np.column_stack([lat, lon * scale]))[1].astype(np.int64)

    # -- persistence --------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        cols = {"lat": self.lat, "lon": self.lon}
        if self.category is not None:
            cols["category"] = self.category.astype(str)
        if self.name is not None:
            cols["name"] = self.name.astype(str)
        if self.allowed is not None:
            cols["allowed"] = np.asarray(self.allowed, bool)
        return pd.DataFrame(cols)

    def meta(self) -> dict:
        return {"kind": self.kind, **self._domain_meta()}

    def _domain_meta(self) -> dict:
        return {} if self.domain is None else {"domain": str(self.domain)}

    def __repr__(self) -> str:
        from ..core.display import space_rows

        return f"{type(self).__name__}({'; '.join(str(v) for _, v in space_rows(self))})"

    def _repr_html_(self) -> str:
        from ..core.display import space_rows, table

        return table(type(self).__name__, space_rows(self))

    def hierarchy(self) -> "Hierarchy":
        """The locations as leaves of a tree for Privelet (Xiao et al., TKDE 2011).

        With categories: root > Foursquare top level > category > location when every category
        is a known Foursquare name (the POI category > sub-category > POI tree of Narita et al.,
        DPM 2021), else root > category > location. Without: the spatial tree of the space (a
        point quad-tree over the POIs; a grid's cell quad-tree)."""
        if self.category is None:
            return self._spatial_hierarchy()
        top = _foursquare_top_level(self.category)
        return Hierarchy.from_levels(self.category) if top is None else Hierarchy.from_levels(top, self.category)

    def _spatial_hierarchy(self) -> "Hierarchy":
        return Hierarchy.points(self.lat, self.lon)

    def top_category(self) -> np.ndarray | None:
        """The coarsest category of each location: its Foursquare top level when every category is
        a known Foursquare name, else the category itself; None without categories. This is the
        level the co-location synthesizer's per-category matrix sums over (paper 000 §5.2)."""
        if self.category is None:
            return None
        top = _foursquare_top_level(self.category)
        return np.asarray(self.category, dtype=object).copy() if top is None else top

    @staticmethod
    def from_saved(frame: pd.DataFrame, meta: dict) -> "Space":
        kind = meta.get("kind")
        category = frame["category"].to_numpy(dtype=object) if "category" in frame else None
        name = frame["name"].to_numpy(dtype=object) if "name" in frame else None
        allowed = frame["allowed"].to_numpy(bool) if "allowed" in frame else None
        if kind == "grid":
            return Grid(rows=int(meta["rows"]), cols=int(meta["cols"]), bbox=tuple(meta["bbox"]),
                        category=category, name=name, allowed=allowed, domain=meta.get("domain"))
        if kind == "pois":
            return POISpace(lat=frame["lat"].to_numpy(np.float64), lon=frame["lon"].to_numpy(np.float64),
                            category=category, name=name)
        raise InputError(f"unknown space kind {kind!r} in meta.json; expected 'grid' or 'pois'")


#: the most locations a space holds: location ids are int32 (data/traces.py)
MAX_LOCATIONS = 2 ** 31 - 1
#: bytes a grid's cell takes while the grid is made (its row, column, latitude and longitude)
GRID_CELL_BYTES = 40


def check_grid_size(rows: int, cols: int, what: str) -> None:
    """An InputError naming the grid's size, before it is made, when ``rows`` x ``cols`` cells are
    more than :data:`MAX_LOCATIONS` or more than this machine's memory holds."""
    cells = rows * cols
    need = cells * GRID_CELL_BYTES
    if cells > MAX_LOCATIONS:
        raise InputError(f"{what} has {cells:,} cells ({size_text(need)} to make), more than the "
                         f"{MAX_LOCATIONS:,} locations a space holds: use larger cells or a smaller box")
    check_memory(need, f"{what} ({cells:,} cells)")


class Grid(Space):
    """A rows x cols grid over a bounding box; cell id = row * cols + col, row 0 in the south.

    This is the numbering of the PPMTF authors' PF data (``poi_id = y_id * 20 + x_id``).

    Parameters
    ----------
    rows, cols : int
        Number of cells along latitude (y) and longitude (x).
    bbox : (lat_min, lat_max, lon_min, lon_max)
        The box the grid covers; points outside it are not in the space.
    allowed : ndarray of shape (rows * cols,), bool, optional
        The cells a public domain covers (data/domain.py); no synthetic location may lie in another.
    domain : str, optional
        That domain in words (what the card names as public knowledge); needed with ``allowed``.
    """

    def __init__(self, rows: int, cols: int, bbox: tuple[float, float, float, float],
                 category: np.ndarray | None = None, name: np.ndarray | None = None,
                 allowed: np.ndarray | None = None, domain: str | None = None):
        if int(rows) < 1 or int(cols) < 1:
            raise InputError(f"grid must have at least 1 x 1 cells, got {rows} x {cols}")
        lat_min, lat_max, lon_min, lon_max = (float(v) for v in bbox)
        if not (-90 <= lat_min < lat_max <= 90 and -180 <= lon_min < lon_max <= 180):
            raise InputError(f"bad bounding box {bbox}: expected lat_min < lat_max in [-90, 90] "
                             "and lon_min < lon_max in [-180, 180]")
        rows, cols = int(rows), int(cols)
        check_grid_size(rows, cols, f"a grid of {rows:,} x {cols:,}")
        dy, dx = (lat_max - lat_min) / rows, (lon_max - lon_min) / cols
        r, c = np.divmod(np.arange(rows * cols), cols)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "cols", cols)
        object.__setattr__(self, "bbox", (lat_min, lat_max, lon_min, lon_max))
        super().__init__(lat=lat_min + (r + 0.5) * dy, lon=lon_min + (c + 0.5) * dx,
                         category=category, name=name)
        object.__setattr__(self, "kind", "grid")
        if allowed is not None:
            allowed = np.asarray(allowed, bool).ravel()
            if allowed.size != rows * cols:
                raise InputError(f"the domain's mask has {allowed.size} cells; the grid has {rows} x {cols}")
            if not allowed.any():
                raise InputError("the domain covers no cell of the grid")
            object.__setattr__(self, "allowed", allowed)
            object.__setattr__(self, "domain", str(domain or "a given domain"))

    def restricted(self, allowed: np.ndarray, domain: str) -> "Grid":
        """This grid with only the cells ``allowed`` (bool per cell) open to synthetic locations,
        by the public knowledge ``domain`` names."""
        return Grid(self.rows, self.cols, self.bbox, self.category, self.name, allowed, domain)

    @property
    def row(self) -> np.ndarray:
        """Row (y index, south to north) of every cell."""
        return np.arange(self.n_locations) // self.cols

    @property
    def col(self) -> np.ndarray:
        """Column (x index, west to east) of every cell."""
        return np.arange(self.n_locations) % self.cols

    @classmethod
    def covering(cls, lat: np.ndarray, lon: np.ndarray, rows: int, cols: int) -> "Grid":
        """The grid over the bounding box of the given points."""
        lat_min, lat_max = float(np.min(lat)), float(np.max(lat))
        lon_min, lon_max = float(np.min(lon)), float(np.max(lon))
        # a degenerate box (all points on one line) still gets a positive extent
        if lat_max <= lat_min:
            lat_max = lat_min + 1e-6
        if lon_max <= lon_min:
            lon_max = lon_min + 1e-6
        return cls(rows, cols, (lat_min, lat_max, lon_min, lon_max))

    def locate(self, lat, lon, venue=None) -> np.ndarray:
        lat_min, lat_max, lon_min, lon_max = self.bbox
        lat, lon = np.asarray(lat, np.float64), np.asarray(lon, np.float64)
        r = np.floor((lat - lat_min) / (lat_max - lat_min) * self.rows).astype(np.int64)
        c = np.floor((lon - lon_min) / (lon_max - lon_min) * self.cols).astype(np.int64)
        # points exactly on the north or east edge belong to the last row or column
        r[(lat == lat_max)] = self.rows - 1
        c[(lon == lon_max)] = self.cols - 1
        inside = (r >= 0) & (r < self.rows) & (c >= 0) & (c < self.cols)
        return np.where(inside, r * self.cols + c, -1).astype(np.int32)

    def snap(self, lat, lon) -> np.ndarray:
        """The cell each point falls in (points outside clamped into the grid); with a public
        domain, a point in a cell it leaves out goes to the nearest cell it allows."""
        lat_min, lat_max, lon_min, lon_max = self.bbox
        lat, lon = np.asarray(lat, np.float64), np.asarray(lon, np.float64)
        cell = self.locate(np.clip(lat, lat_min, lat_max), np.clip(lon, lon_min, lon_max)).astype(np.int64)
        out = self.outside(cell)
        if out.any():
            keep = self.allowed_locations()
            cell[out] = keep[Space(self.lat[keep], self.lon[keep]).snap(lat[out], lon[out])]
        return cell

    def meta(self) -> dict:
        return {"kind": "grid", "rows": self.rows, "cols": self.cols, "bbox": list(self.bbox), **self._domain_meta()}

    def _spatial_hierarchy(self) -> "Hierarchy":
        return Hierarchy.quadtree(self.rows, self.cols)


class POISpace(Space):
    """A set of POIs; points are located by their venue id (``name``)."""

    def __init__(self, lat, lon, category=None, name=None):
        super().__init__(lat=np.asarray(lat, np.float64), lon=np.asarray(lon, np.float64),
                         category=None if category is None else np.asarray(category, dtype=object),
                         name=None if name is None else np.asarray(name, dtype=object))
        object.__setattr__(self, "kind", "pois")

    @classmethod
    def top_visited(cls, points: pd.DataFrame, n: int) -> "POISpace":
        """The ``n`` most visited venues of a points table (paper 001 §4.1 keeps 1000).

        Ties are broken by venue id so the choice is reproducible. A venue's point is the median
        of its events' coordinates, its category the most frequent one.
        """
        if "venue" not in points:
            raise InputError("`pois` needs a venue column in the input (check-in data); "
                             "use `grid` for GPS points")
        if n < 1:
            raise InputError(f"`pois` must be at least 1, got {n}")
        venue = points["venue"].astype(str)
        counts = venue.value_counts()
        order = pd.DataFrame({"v": counts.index, "c": counts.to_numpy()}).sort_values(
            ["c", "v"], ascending=[False, True], kind="stable")
        return cls.of_venues(points, order["v"].to_numpy()[:n])

    @classmethod
    def of_venues(cls, points: pd.DataFrame, keep, known: pd.DataFrame | None = None) -> "POISpace":
        """The venues ``keep`` (ids, in this order) as a space: each venue's point from ``known``
        (venue id -> lat, lon: a public POI list) where given, else the median of its events'
        coordinates; its category the most frequent one among its events."""
        keep = np.asarray([str(v) for v in keep], dtype=object)
        sub = points.loc[points["venue"].astype(str).isin(keep)].assign(venue=lambda d: d["venue"].astype(str))
        grouped = sub.groupby("venue", sort=False)
        if known is not None:
            coords = known.set_axis(known.index.astype(str)).reindex(keep)[["lat", "lon"]]
        else:
            coords = grouped[["lat", "lon"]].median().reindex(keep)
        if coords.isna().any().any():
            missing = coords.index[coords.isna().any(axis=1)][0]
            raise InputError(f"venue {missing!r} has no coordinates")
        category = None
        if "category" in sub:
            category = grouped["category"].agg(lambda s: s.mode().iloc[0]).reindex(keep)
            category = category.fillna("unknown").to_numpy(dtype=object)
        return cls(coords["lat"].to_numpy(), coords["lon"].to_numpy(), category=category, name=keep)

    def locate(self, lat, lon, venue=None) -> np.ndarray:
        if venue is None:
            raise InputError("a POI space locates points by venue id, but the input has no venue column")
        if self.name is None:
            raise InputError("this POI space has no venue ids to locate points by")
        index = pd.Index(self.name.astype(str))
        return index.get_indexer(pd.Index(np.asarray(venue).astype(str))).astype(np.int32)
