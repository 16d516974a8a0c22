"""A public domain: where the movement can be, by knowledge the user holds apart from the data (a
waterway for ships, a road network for cars, a land-use map), given as polygons or lines (issue 54).

The domain restricts a grid to the cells it covers (:meth:`Domain.cells`: a cell is allowed when
it touches the domain's geometry, its buffer included); the space then carries the mask
(:attr:`locsynth.data.space.Space.allowed`) and every method keeps its synthetic locations inside
it. Because the domain comes from outside the training data, it is public: no epsilon covers it and
none is needed, and the card names it. Lines (a road's centre line) and points touch the cells they
cross; ``buffer_m`` widens any geometry first (GPS error, a road's width), in metres on a local
projection (the UTM zone of the domain's centre).

GeoPandas (the ``geo`` extra) reads the files and does the geometry; nothing else here needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .space import Grid

#: grid rows tested against the domain at once (bounds the boxes held in memory)
ROWS_AT_ONCE = 256


def _geopandas():
    try:
        import geopandas
    except ImportError:  # pragma: no cover (the geo extra is installed where the tests run)
        raise InputError("a domain needs GeoPandas: pip install 'locsynth[geo]'") from None
    return geopandas


@dataclass(frozen=True)
class Domain:
    """A domain's geometry (shapely, in WGS 84 degrees: x longitude, y latitude) and its
    description in words (what the card names as public knowledge)."""

    geometry: object
    description: str

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """(lat_min, lat_max, lon_min, lon_max) of the geometry."""
        x0, y0, x1, y1 = self.geometry.bounds
        return float(y0), float(y1), float(x0), float(x1)

    def cells(self, grid: Grid) -> np.ndarray:
        """Bool of shape (rows * cols,): the cells of ``grid`` the geometry touches (boundary
        included), tested a block of rows at a time against each part's own range of cells."""
        import shapely

        lat_min, lat_max, lon_min, lon_max = grid.bbox
        dy, dx = (lat_max - lat_min) / grid.rows, (lon_max - lon_min) / grid.cols
        out = np.zeros(grid.rows * grid.cols, bool)
        parts = shapely.get_parts(self.geometry)
        for part in parts:
            x0, y0, x1, y1 = part.bounds
            r0, r1 = (int(np.clip(np.floor((v - lat_min) / dy), 0, grid.rows - 1)) for v in (y0, y1))
            c0, c1 = (int(np.clip(np.floor((v - lon_min) / dx), 0, grid.cols - 1)) for v in (x0, x1))
            if y1 < lat_min or y0 > lat_max or x1 < lon_min or x0 > lon_max:
                continue
            shapely.prepare(part)
            cols = np.arange(c0, c1 + 1)
            for lo in range(r0, r1 + 1, ROWS_AT_ONCE):
                rows = np.arange(lo, min(lo + ROWS_AT_ONCE, r1 + 1))
                r, c = np.repeat(rows, cols.size), np.tile(cols, rows.size)
                boxes = shapely.box(lon_min + c * dx, lat_min + r * dy, lon_min + (c + 1) * dx, lat_min + (r + 1) * dy)
                hit = shapely.intersects(part, boxes)
                out[r[hit] * grid.cols + c[hit]] = True
        return out


def as_domain(domain, buffer_m: float = 0.0) -> Domain | None:
    """A :class:`Domain` from what the user holds: a file any GeoPandas reads (path), a GeoSeries or
    GeoDataFrame of polygons, lines or points (in any CRS it states; none: WGS 84 degrees), a
    shapely geometry (WGS 84), or a Domain; None stays None. ``buffer_m`` widens the geometry by
    that many metres first."""
    buffer_m = _buffer(buffer_m)
    if domain is None:
        if buffer_m:
            raise InputError("a buffer widens a domain: give the domain too")
        return None
    if isinstance(domain, Domain):
        return domain if buffer_m == 0 else _buffered(domain.geometry, domain.description, buffer_m)
    gpd = _geopandas()
    where = "the domain"
    if isinstance(domain, (str, Path)):
        path = Path(domain)
        if not path.exists():
            raise InputError(f"domain {path}: no such file")
        try:
            domain = gpd.read_file(path)
        except Exception as exc:            # pyogrio's and fiona's errors differ: say which file
            raise InputError(f"domain {path}: GeoPandas cannot read it ({exc})") from None
        where = path.name
    if hasattr(domain, "geom_type") and not hasattr(domain, "geometry"):     # a shapely geometry
        domain = gpd.GeoSeries([domain], crs="EPSG:4326")
    if isinstance(domain, gpd.GeoDataFrame):
        domain = domain.geometry
    if not isinstance(domain, gpd.GeoSeries):
        raise InputError(f"a domain is a GeoSeries or GeoDataFrame of polygons or lines, a shapely geometry or a "
                         f"file GeoPandas reads; got {type(domain).__name__}")
    series = domain[~(domain.isna() | domain.is_empty)]
    if len(series) == 0:
        raise InputError(f"{where} holds no geometry")
    series = _in_degrees(series, where)
    kinds = series.geom_type.value_counts()
    said = ", ".join(f"{n} {kind.lower()}{'s' if n > 1 else ''}" for kind, n in kinds.items())
    description = f"{where} ({said})" if where != "the domain" else f"a given domain ({said})"
    geometry = series.union_all()
    if buffer_m > 0:
        return _buffered(geometry, description, buffer_m)
    return Domain(geometry, description)


def _buffer(value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        value = -1.0
    if not (np.isfinite(value) and value >= 0):
        raise InputError(f"the domain's buffer must be a number of metres >= 0, got {value!r}")
    return value


def _in_degrees(series, where: str):
    """``series`` in WGS 84: reprojected from the CRS it states; without one, its coordinates
    must read as degrees."""
    if series.crs is None:
        x0, y0, x1, y1 = series.total_bounds
        if not (-180 <= x0 <= x1 <= 180 and -90 <= y0 <= y1 <= 90):
            raise InputError(f"{where} has no CRS and its coordinates are not degrees (bounds {x0:g}, {y0:g}, "
                             f"{x1:g}, {y1:g}): set its CRS (GeoSeries.set_crs)")
        return series.set_crs("EPSG:4326")
    return series if series.crs.equals("EPSG:4326") else series.to_crs("EPSG:4326")


def _buffered(geometry, description: str, buffer_m: float) -> Domain:
    """The geometry widened by ``buffer_m`` metres, on the UTM zone of its centre."""
    gpd = _geopandas()
    series = gpd.GeoSeries([geometry], crs="EPSG:4326")
    local = series.estimate_utm_crs()
    widened = series.to_crs(local).buffer(buffer_m).to_crs("EPSG:4326").iloc[0]
    return Domain(widened, f"{description}, widened by {buffer_m:g} m")
