"""Releases: what may leave the building (DESIGN.md, the last step of the data path).

A synthetic set as ``sample`` writes it, and a model, name training users (``user_id``, ``source``,
``trace_no``, log-likelihoods): they are internal. :func:`release` turns a synthetic (or
anonymized) set into a release directory:

- only the traces that passed the plausible-deniability test, when its result is given (checked
  to be of this very set);
- every trace under a random pseudonym 1 .. n, drawn from the operating system's randomness
  (not from a seed: whoever knows the seed could otherwise undo the shuffle), traces written in
  pseudonym order, so neither names nor order point at training users;
- nothing else per trace: no source, trace number, log-likelihood, home or user id;
- ``traces.csv`` and ``traces.parquet`` (pseudonym, datetime, lat, lon, location_id),
  ``locations.csv``, ``release.json`` (the release card, machine-readable, with the space and time
  axis needed to read the release back) and ``RELEASE.md`` (the same card for people).

The link from pseudonym to source goes only to a separate key file, for evaluation
(``locsynth evaluate --synthetic RELEASE --key KEY``), never into the release directory.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.jsonable import json_default
from ..privacy.ledger import Ledger
from ..data.space import Space
from ..data.timeaxis import TimeAxis
from ..core.files import atomic_output
from ..data.modes import Bounds
from ..data.traces import TraceSet, is_trip_set, read_json_meta
from ..privacy.noise import describe_noise

RELEASE_FORMAT = "locsynth.release"
RELEASE_VERSION = 1
#: what an evaluation's metrics.json contributes to the card
ATTACK_KEYS = ("reid_rate", "mia_advantage", "mia_accuracy", "mia_epsilon_lower_bound")


@dataclass
class Release:
    """A release in memory: exactly what :meth:`write` puts in the release directory (``events``
    as traces.csv / traces.parquet, ``locations``, the ``card``), and apart the ``key``."""

    events: pd.DataFrame
    locations: pd.DataFrame
    card: dict
    key: pd.DataFrame

    def write(self, out: str | Path, *, key: str | Path | None = None, overwrite: bool = False) -> None:
        """The release directory ``out`` (and the key file ``key``), each written whole or not at all."""
        out = Path(out)
        if key is not None:
            key = Path(key)
            if _inside(key, out):
                raise InputError(f"the key file {key} would be inside the release {out}; write it elsewhere")
            if key.exists() and not overwrite:
                raise InputError(f"{key} exists; pass `overwrite` to replace it")
        with atomic_output(out, overwrite, directory=True) as tmp:
            frame = self.events
            csv = frame.assign(datetime=frame["datetime"].map(lambda t: "" if pd.isna(t) else t.isoformat()))
            csv.to_csv(tmp / "traces.csv", index=False, float_format="%.6f")
            frame.to_parquet(tmp / "traces.parquet", index=False)
            self.locations.to_csv(tmp / "locations.csv", index=False, float_format="%.6f")
            (tmp / "release.json").write_text(json.dumps(self.card, indent=2, default=json_default))
            (tmp / "RELEASE.md").write_text(card_markdown(self.card))
            if key is not None:
                with atomic_output(key, overwrite, directory=False) as key_tmp:
                    self.key.to_csv(key_tmp, index=False)


def make_release(synthetic: TraceSet, *, pdtest=None, evaluation=None) -> Release:
    """The release of ``synthetic`` in memory (module docstring: what is kept and what is dropped).

    ``pdtest``: a :class:`~locsynth.privacy.plausible_deniability.PDResult` of this set, or the
    directory ``locsynth pdtest`` wrote; ``evaluation``: a :class:`~locsynth.evaluation.evaluate.Report` of
    it, or the directory ``locsynth evaluate`` wrote."""
    if "source" not in synthetic.users:
        raise InputError("release needs a synthetic or anonymized set (the output of locsynth sample or "
                         "anonymize); this set has no source column")
    keep, pd_card = _pd_filter(synthetic, pdtest)
    rows = np.flatnonzero(keep & (synthetic.counts() > 0))
    if rows.size == 0:
        raise InputError("no trace is left to release (none passed the PD test)")
    # the kept traces in a random order, released as pseudonyms 1 .. n in that order
    released = synthetic.select_users(np.random.default_rng(secrets.randbits(128)).permutation(rows))
    ids = np.arange(1, rows.size + 1)
    locations = released.space.to_frame().drop(columns=["name"], errors="ignore")
    locations.insert(0, "location_id", np.arange(released.space.n_locations))
    key_table = pd.DataFrame({"pseudonym": ids, "source": released.users["source"].to_numpy(),
                              "trace_no": released.users["trace_no"].to_numpy(),
                              "user_id": released.users["user_id"].to_numpy()})
    return Release(_events(released, ids), locations, _card(synthetic, released, pd_card, evaluation), key_table)


def release(synthetic: TraceSet, out: str | Path, *, pdtest=None, key: str | Path | None = None,
            evaluation=None, overwrite: bool = False) -> dict:
    """Write the release of ``synthetic`` to the directory ``out`` (and the key to ``key``);
    returns the card. See the module docstring for what is kept and what is dropped."""
    made = make_release(synthetic, pdtest=pdtest, evaluation=evaluation)
    made.write(out, key=key, overwrite=overwrite)
    return made.card


def load_release(path: str | Path, key: str | Path | None = None) -> TraceSet:
    """A release directory as a TraceSet: one trace per pseudonym (``user_id``); with the ``key``
    file, ``source`` and ``trace_no`` as in the synthetic set, so that it can be evaluated."""
    path = Path(path)
    card = read_json_meta(path, "release.json", RELEASE_FORMAT, RELEASE_VERSION, "release")
    try:
        events = pd.read_parquet(path / "traces.parquet")
        locations = pd.read_csv(path / "locations.csv")
    except FileNotFoundError as exc:
        raise InputError(f"{path} is not a locsynth release ({Path(exc.filename).name} is missing)") from None
    except (ValueError, OSError) as exc:
        raise InputError(f"{path} is damaged: {exc}") from None
    space = Space.from_saved(locations.drop(columns="location_id"), card["space"])
    time = TimeAxis.from_meta(card["time"])
    ids, user = np.unique(events["pseudonym"].to_numpy(), return_inverse=True)
    timed = card.get("has_times", True)
    t = time.instants(events["datetime"]) if timed else events["step"].to_numpy(np.int64)
    if (t < 0).any():
        raise InputError(f"{path / 'traces.parquet'} has times outside the release's time axis")
    users = pd.DataFrame({"user_id": ids})
    if key is not None:
        table = _read_key(Path(key))
        row = pd.Index(table["pseudonym"]).get_indexer(ids)
        if (row < 0).any() or len(table) != ids.size:
            raise InputError(f"the key {key} does not belong to the release {path}: its pseudonyms differ")
        users["source"] = table["source"].to_numpy()[row].astype(np.int32)
        users["trace_no"] = table["trace_no"].to_numpy()[row].astype(np.int32)
    info = {"source": card.get("method"), "release": str(path), "params": card.get("params"),
            **{k: card[k] for k in ("bounds", "clock", "noise") if card.get(k)}}
    if not timed:
        info["times"] = "none"
    return TraceSet.from_events(user, t, events["location_id"].to_numpy(), users, space, time, info,
                                ledger=Ledger.from_dict(card.get("ledger")))


def is_release(path: str | Path) -> bool:
    return (Path(path) / "release.json").is_file()


def card_markdown(card: dict) -> str:
    """The release card for people."""
    lines = [f"# Release card: {card['traces']} synthetic traces", "",
             f"Made by locsynth {card['locsynth']} with the method **{card['method']}**, "
             f"{_training_phrase(card.get('training') or {})}.", "",
             "## What is in it", "",
             f"- `traces.csv`, `traces.parquet`: {card['traces']} traces, {card['events']} events "
             f"(pseudonym, datetime, lat, lon, location_id); pseudonyms are random and say nothing "
             f"about who the synthesizer learned from.",
             f"- `locations.csv`: the {card['space']['n_locations']} locations ({card['space']['kind']}).",
             *_domain_lines(card['space']),
             f"- Times: {card.get('times', 'in UTC')}.",
             f"- Time axis: {card['time_description']}."]
    if card.get("bounds"):
        lines.append(f"- Public bounds of the movement: {Bounds.from_dict(card['bounds']).describe()}; no step is "
                     "faster than its speed bound.")
    noise = card.get("noise")
    if noise:
        lines.append(f"- Noise: {describe_noise(noise)}.")
    lines += ["", "## What protects it", ""]
    pd_card = card.get("pd_test")
    if pd_card:
        lines.append(f"- Plausible deniability (paper 001 §3.5): only the {card['traces']} traces that passed the "
                     f"(k = {pd_card['k']}, eta = {pd_card['eta']:g}) test against {pd_card['candidates']} candidates "
                     f"are released ({100 * pd_card['pass_rate']:.1f}% of {pd_card['tested']}).")
    else:
        lines.append("- No plausible-deniability test was applied before this release.")
    ledger = Ledger.from_dict(card.get("ledger"))
    if ledger.spends:
        lines += [f"- Differential privacy: {line}." for line in ledger.describe()]
        lines += [f"  - {s.mechanism}: epsilon {s.epsilon:.4g}, delta {s.delta:.3g}; neighbouring inputs: "
                  f"{s.neighbours()}{'' if s.holds else ' (a bound only; does not hold here)'}. {s.saw}. "
                  f"{s.assumptions}" for s in ledger.spends]
    else:
        lines.append("- Differential privacy: none (the method took no differentially private step).")
        lines += [f"- Depends on the data without DP: {fact}." for fact in ledger.uncovered]
    attacks = card.get("attacks")
    lines += ["", "## What an attacker was measured to learn", ""]
    if attacks and attacks.get("withheld"):
        lines.append(f"- Measured ({attacks.get('evaluated', '')}), but not stated here: {attacks['withheld']}.")
    elif attacks:
        scope = attacks.get("evaluated", "")
        for k in ATTACK_KEYS:
            if attacks.get(k) is not None:
                lines.append(f"- {k}: {attacks[k]:.4f}")
        lines.append(f"- Measured on: {scope}.")
    else:
        lines.append("- Not measured: no evaluation was given (locsynth release --evaluation DIR).")
    lines += ["", "## Method parameters", "", "```json", json.dumps(card.get("params"), indent=2, default=json_default), "```", ""]
    return "\n".join(lines)


def _domain_lines(space: dict) -> list[str]:
    """The card's line on a public domain (none without one)."""
    if not space.get("domain"):
        return []
    return [f"- Public domain: every location lies in the {space.get('n_allowed', '?')} cells that {space['domain']} "
            f"covers (`allowed` in `locations.csv`): public knowledge given apart from the training data, which "
            f"no epsilon needs to cover."]


def _pd_filter(synthetic: TraceSet, pdtest) -> tuple[np.ndarray, dict | None]:
    if pdtest is None:
        return np.ones(synthetic.n_traces, bool), None
    from ..privacy.plausible_deniability import PDResult, load_pd_result

    if isinstance(pdtest, PDResult):
        summary, passed = {**pdtest.summary(), "synthetic": synthetic.fingerprint()}, pdtest.passed
    else:
        summary, passed = load_pd_result(pdtest)
    if summary.get("synthetic") != synthetic.fingerprint() or passed.size != synthetic.n_traces:
        raise InputError(f"the PD test in {pdtest} was run on another synthetic set; run locsynth pdtest on this one")
    return passed, {"k": summary["k"], "eta": summary["eta"], "pass_rate": summary["pass_rate"],
                    "candidates": summary.get("candidates"), "tested": int(passed.size)}


def _card(synthetic: TraceSet, released: TraceSet, pd_card, evaluation) -> dict:
    from ..core.version import __version__

    info = synthetic.info
    ledger = synthetic.ledger or Ledger()
    card = {
        "format": RELEASE_FORMAT, "format_version": RELEASE_VERSION, "locsynth": __version__,
        "method": info.get("source"), "params": info.get("params"),
        "training": training_facts(info.get("training", {}), ledger),
        "traces": released.n_traces, "events": released.n_events,
        "space": {**released.space.meta(), "n_locations": released.space.n_locations,
                  **({"n_allowed": released.space.n_allowed} if released.space.domain is not None else {})},
        "time": released.time.meta(), "time_description": released.time.describe(),
        "times": times_phrase(synthetic), "has_times": synthetic.has_times,
        "pd_test": pd_card, "ledger": ledger.to_dict(), "ledger_summary": ledger.describe(),
        **_public_frame(synthetic),
        "neighbours": {unit: t["neighbours"] for unit, t in ledger.totals().items() if t["spends"]},
        "attacks": _attacks(evaluation, synthetic, ledger) if evaluation is not None else None,
    }
    return card


#: what a DP release may say of its training data: a DP count, its unit and its spend
DP_TRAINING_KEYS = ("dp_count", "unit", "dp_count_epsilon")


def training_facts(training: dict, ledger: Ledger) -> dict:
    """What the card says of the training data: everything for a method without DP, or when the
    DP holds for replace-one neighbours (whose sizes are public); else only a DP count (the exact
    sizes are what one user added or removed changes)."""
    if not ledger.claims_dp or ledger.sizes_public():
        return dict(training)
    return {k: training[k] for k in DP_TRAINING_KEYS if k in training}


def _training_phrase(training: dict) -> str:
    if "dp_count" in training:
        return (f"trained on about {training['dp_count']} {training.get('unit', 'user')}s (a DP count, epsilon "
                f"{training.get('dp_count_epsilon', float('nan')):.3g}; the exact number is protected)")
    if "users" in training:
        return (f"trained on {training['users']} users ({training.get('traces', '?')} traces, "
                f"{training.get('events', '?')} events)" if "traces" in training else
                f"trained on {training['users']} users (a number this method's DP takes as public)")
    return "trained on data whose size this card does not state (differential privacy protects it)"


#: what a DP release's card says instead of its evaluation's scores
WITHHELD = ("the attacks' scores are computed from the training data outside every DP step (a membership "
            "attack's best accuracy alone can be the exact ratio of training to test users): they stay in the "
            "evaluation's own folder, which is internal, and are not part of a DP release")


def _public_frame(synthetic: TraceSet) -> dict:
    """The card's statement of what was public about the movement (a trip set's bounds, data/modes.py),
    the clock the data came on, and the estimated share of noise in a DP release (privacy/noise.py)."""
    out = {}
    if "bounds" in synthetic.info or is_trip_set(synthetic):
        out["bounds"] = synthetic.bounds.to_dict()
    for key in ("clock", "noise"):
        if key in synthetic.info:
            out[key] = synthetic.info[key]
    return out


def _attacks(evaluation, synthetic: TraceSet, ledger: Ledger) -> dict:
    """What the card says of the evaluation: its attack scores for a release without DP, and for a
    DP release only that they exist and where (issue #35: a card that copied ``mia_accuracy``
    stated 455 / 569, the exact sizes of the split the DP count protects)."""
    from ..evaluation.evaluate import Report

    if ledger.claims_dp:
        where = "the report given" if isinstance(evaluation, Report) else str(evaluation)
        return {"withheld": WITHHELD, "evaluated": where}
    report = evaluation if isinstance(evaluation, Report) else Report.load(evaluation)
    out = {k: (report.metrics.get(k) or {}).get("synthetic") for k in ATTACK_KEYS}
    same = report.meta.get("synthetic_fingerprint") == synthetic.fingerprint()
    where = "the report given" if isinstance(evaluation, Report) else str(evaluation)
    out["evaluated"] = (f"{where}: " + ("this synthetic set before the PD filter" if same else
                        f"a set of {(report.meta.get('synthetic') or {}).get('traces', '?')} traces (not verified to be "
                        f"this one)"))
    return out


def _events(ts: TraceSet, ids: np.ndarray) -> pd.DataFrame:
    """The released events: times as :mod:`locsynth.data.export` shows them (aware, on the set's clock;
    none, and each point's ``step``, for a set without times)."""
    from ..data.export import steps, times

    out = pd.DataFrame({"pseudonym": ids[ts.user].astype(np.int64), "datetime": times(ts).to_numpy()})
    if not ts.has_times:
        out["step"] = steps(ts)
    return out.assign(lat=ts.space.lat[ts.loc], lon=ts.space.lon[ts.loc], location_id=ts.loc)


def times_phrase(ts: TraceSet) -> str:
    """What a set's times are, for its card: recorded or a model's, or none (and why)."""
    said = ts.info.get("times")
    if ts.has_times:
        if said:
            return f"times from {said}, on the clock of {ts.time.timezone}"
        return (f"times on the clock of {ts.time.timezone}, as the method produced them" if ts.synthetic else
                f"recorded times, on the clock of {ts.time.timezone}")
    if said == "hour":
        return ("no times: the method releases each trip's hour of day, not when it happened; `datetime` is empty "
                "and `step` numbers each trip's points from 0")
    return ("no times: the method releases where a trip goes, not when; `datetime` is empty and `step` numbers "
            "each trip's points from 0")


def _read_key(path: Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(f"cannot read the key file {path}: {exc}") from None
    missing = {"pseudonym", "source", "trace_no"} - set(table.columns)
    if missing:
        raise InputError(f"{path} is not a release key: missing column(s) {', '.join(sorted(missing))}")
    return table


def _inside(a: Path, b: Path) -> bool:
    try:
        a.resolve().relative_to(b.resolve())
        return True
    except ValueError:
        return False
