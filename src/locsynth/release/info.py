"""``locsynth info``: what a TraceSet, a fitted model or a release directory holds, and its ledger.

A model and a release are described from their JSON (nothing is loaded or compiled); their other
files are checked whole, so that a damaged one is an error here rather than at the next step.
"""

from __future__ import annotations

from pathlib import Path

from ..privacy.ledger import Ledger


def describe(path: str | Path) -> dict:
    """Facts about ``path`` as a JSON-ready dict: ``kind`` ('traceset', 'model' or 'release'),
    counts, method and parameters where there are some, and ``ledger`` (summary lines, spends,
    totals) where the data has one."""
    path = Path(path)
    if (path / "release.json").is_file():
        from .publish import RELEASE_FORMAT, RELEASE_VERSION
        from ..data.traces import read_json_meta

        card = read_json_meta(path, "release.json", RELEASE_FORMAT, RELEASE_VERSION, "release")
        _check_release_files(path)
        facts = {"kind": "release", "method": card.get("method"), "traces": card.get("traces"),
                 "events": card.get("events"), "training": card.get("training"), "pd_test": card.get("pd_test"),
                 "attacks": card.get("attacks"), "time": card.get("time_description")}
        return {**facts, "ledger": _ledger(card.get("ledger"))}
    if (path / "model.json").is_file():
        from ..synth.base import check_model_files, read_model_meta

        meta = read_model_meta(path)
        check_model_files(path)
        facts = {"kind": "model", "method": meta["method"], "params": meta.get("params"),
                 "training": meta.get("training"), **meta.get("summary", {})}
        return {**facts, "ledger": _ledger(meta.get("ledger"))}
    from ..data.partitioned import load_traces

    ts = load_traces(path)                   # a partitioned set: its meta alone
    facts = {"kind": "traceset", **ts.summary()}
    if ts.ledger is not None:
        facts["ledger"] = _ledger(ts.ledger.to_dict())
    return facts


def _check_release_files(path: Path) -> None:
    """An InputError naming a file of the release that is missing, or a traces.parquet cut short."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..core.errors import InputError

    for name in ("traces.csv", "traces.parquet", "locations.csv"):
        if not (path / name).is_file():
            raise InputError(f"{path / name} is missing: the release is incomplete")
    try:
        pq.read_metadata(path / "traces.parquet")
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path / 'traces.parquet'} is damaged ({exc})") from None


def _ledger(data: dict | None) -> dict:
    ledger = Ledger.from_dict(data)
    lines = ledger.describe() or ["no differentially private step (empty ledger)"]
    return {"summary": lines, "spends": [s.__dict__ for s in ledger.spends], "totals": ledger.totals()}
