"""The DP mobility report's BenchmarkReport (Kapp et al., ``dp-mobility-report`` 0.2.11) of sets of
trips against one base set, as an outside evaluator runs it: its own noise off (no privacy budget),
square tiles of ``--tile-km`` km over the sets' box. Run with the report's own environment (it pins
pandas 2.1; locsynth needs 3), on CSV files ``locsynth export --format skmob`` wrote (uid, tid,
datetime naive and local, lat, lng); benchmarks/bench_dpmr.py makes them and calls this script.
Nothing of locsynth is imported here, and neither the package nor its tests import this file.

    /work/dpmr-venv/bin/python benchmarks/dpmr_compare.py --base test.csv --alternative ngram=ngram.csv \\
        --alternative training=train.csv --out measures.csv [--tile-km 1] [--html DIR]

Writes one row per alternative, analysis and measure (the report's selected measure of each analysis
and every JSD it computes) to ``--out``.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
import warnings
from pathlib import Path


def tiles(frames, km: float):
    """Square tiles of ``km`` km (a GeoDataFrame with ``tile_id``, WGS 84) covering every point of ``frames``."""
    import geopandas as gpd
    import numpy as np
    from shapely.geometry import box

    lat = np.concatenate([f["lat"].to_numpy() for f in frames])
    lng = np.concatenate([f["lng"].to_numpy() for f in frames])
    south, north, west, east = lat.min(), lat.max(), lng.min(), lng.max()
    dlat = km / 111.32
    dlng = km / (111.32 * math.cos(math.radians((south + north) / 2)))
    rows, cols = int(math.ceil((north - south) / dlat)) + 1, int(math.ceil((east - west) / dlng)) + 1
    cells = [box(west + c * dlng, south + r * dlat, west + (c + 1) * dlng, south + (r + 1) * dlat)
             for r in range(rows) for c in range(cols)]
    return gpd.GeoDataFrame({"tile_id": [str(i) for i in range(len(cells))]}, geometry=cells, crs="EPSG:4326")


def read(path: Path):
    import pandas as pd

    frame = pd.read_csv(path)
    missing = {"uid", "tid", "datetime", "lat", "lng"} - set(frame)
    if missing:
        sys.exit(f"{path} lacks the column(s) {', '.join(sorted(missing))}: write it with locsynth export --format skmob")
    frame["datetime"] = pd.to_datetime(frame["datetime"])
    if frame["datetime"].dt.tz is not None:
        sys.exit(f"{path} has times with an offset: the report drops every temporal analysis on them; "
                 "write it with locsynth export --format skmob (naive local times)")
    return frame


def column_signatures() -> None:
    """The report's EMD hands OpenCV 1-d signatures, which OpenCV 5 (this environment's) reads as one
    row, not one column of weights, and refuses ("Cost matrix size does not match signatures"): give
    it columns, as OpenCV 4 read them."""
    import numpy as np
    from dp_mobility_report.benchmark import similarity_measures as sm

    emd = sm.cv2.EMD
    if getattr(emd, "columns", False):
        return

    def columns(a, b, *args, **kwargs):
        return emd(np.asarray(a).reshape(-1, 1), np.asarray(b).reshape(-1, 1), *args, **kwargs)

    columns.columns = True
    sm.cv2.EMD = columns


def failing_analysis(error: BaseException) -> str | None:
    """The analysis whose measures raised ``error`` in the report's compute_similarity_measures: the
    ``if const.X not in analysis_exclusion`` block that holds the failing line (None if none)."""
    import traceback

    from dp_mobility_report import constants as const

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.name == "compute_similarity_measures"]
    if not frames:
        return None
    lines = Path(frames[-1].filename).read_text().splitlines()
    for line in reversed(lines[:frames[-1].lineno]):
        found = re.search(r"if const\.(\w+) not in analysis_exclusion", line)
        if found:
            return getattr(const, found.group(1))
    return None


def compare(base, alternative, tessellation, html: Path | None = None) -> dict:
    """Every measure of the BenchmarkReport of ``alternative`` against ``base``: {analysis: {measure: value}}."""
    from dp_mobility_report import BenchmarkReport

    column_signatures()
    excluded: list[str] = []
    while True:
        try:
            # a histogram's bins follow each set's own largest value, and one just above a whole km (13.00004)
            # gets a bin less than the other set's: the report then fails; that analysis is left out
            report = BenchmarkReport(df_base=base, df_alternative=alternative, tessellation=tessellation,
                                     privacy_budget_base=None, privacy_budget_alternative=None,
                                     user_privacy_base=False, user_privacy_alternative=False,
                                     analysis_exclusion=excluded or None, disable_progress_bar=True)
            break
        except ValueError as error:
            culprit = failing_analysis(error)
            if "broadcasting" not in str(error) or culprit is None or culprit in excluded:
                raise
            excluded.append(culprit)
    if excluded:
        print(f"left out (the report's bins differ between the two sets): {', '.join(excluded)}", file=sys.stderr)
    if html is not None:
        report.to_file(str(html))
    out: dict = {}
    for measure in ("smape", "jsd", "kld", "emd", "kt"):
        for analysis, value in (getattr(report, measure) or {}).items():
            out.setdefault(analysis, {})[measure] = value
    for analysis, value in report.similarity_measures.items():
        out.setdefault(analysis, {})["selected"] = value
    out["_selection"] = dict(report.measure_selection)
    return out


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--alternative", action="append", required=True, help="NAME=CSV, one per set")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tile-km", type=float, default=1.0)
    parser.add_argument("--html", type=Path, default=None, help="a folder for each comparison's HTML report")
    args = parser.parse_args()
    import pandas as pd

    base = read(args.base)
    named = [a.split("=", 1) for a in args.alternative]
    frames = {name: read(Path(path)) for name, path in named}
    tessellation = tiles([base, *frames.values()], args.tile_km)
    rows = []
    for name, frame in frames.items():
        began = time.perf_counter()
        html = None if args.html is None else args.html / f"{name}.html"
        measures = compare(base, frame, tessellation, html)
        selection = measures.pop("_selection")
        for analysis, values in measures.items():
            for measure, value in values.items():
                if isinstance(value, (int, float)) or value is None:
                    rows.append({"alternative": name, "analysis": analysis, "measure": measure, "value": value,
                                 "selected_measure": selection.get(analysis)})
        print(f"{name}: {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
