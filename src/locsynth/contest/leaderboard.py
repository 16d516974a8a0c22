"""Many teams (paper 003 §3.4, Contest Flow and §5.1): every team's anonymized traces against every
other team's attack; a team's privacy is its minimum over the attacks, and an invalid team
(s_U < s_req) gets 0.

A team is (name, original traces, reference traces, anonymizer or its anonymized traces, attack
name). Attacks are deterministic given the seed, so each (target team, attack) runs once however
many teams chose that attack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.errors import InputError
from ..core.files import atomic_output
from ..data.traces import TraceSet
from . import scores
from .attacks import ATTACKS, attack
from ..core.progress import reporter
from .run import _seed, attack_options, check_pair, score_entry


@dataclass
class Team:
    name: str
    original: TraceSet
    reference: TraceSet
    anonymizer: object            # an Anonymizer, or the team's anonymized TraceSet
    attack: str


def leaderboard(teams: list[Team], *, seed: int = 0, progress=None, event_share: float = 1.0,
                region_cap: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pairs: team, attacker, attack, reid, trace; standings: team, utility, valid, reid_min,
    trace_min, rank by trace_min as the best-anonymization award)."""
    names = [t.name for t in teams]
    if len(set(names)) != len(names) or len(teams) < 2:
        raise InputError("a leaderboard needs at least two teams with distinct names")
    for t in teams:
        if t.attack not in ATTACKS:
            raise InputError(f"team {t.name}: unknown attack {t.attack!r}; expected one of {', '.join(ATTACKS)}")
        check_pair(t.original, t.reference)
    pairs, standings = [], []
    distances: dict[int, object] = {}
    report = reporter(progress)
    for k, team in enumerate(teams):
        report(k, len(teams), team.name)
        anonymized = team.anonymizer if isinstance(team.anonymizer, TraceSet) else \
            team.anonymizer.transform(team.original, seed=_seed(seed, k))
        space = team.original.space
        if id(space) not in distances:
            distances[id(space)] = scores.distance_matrix(space)
        d = distances[id(space)]
        entry = score_entry(team.original, team.reference, team.name, anonymized, seed=_seed(seed, k), attacks=(),
                            distances=d)
        done = {}
        for other in teams:
            if other is team:
                continue
            if other.attack not in done:
                inference = attack(other.attack, team.reference, entry.published, seed=_seed(seed, k),
                                   **attack_options(other.attack, event_share, region_cap))
                done[other.attack] = (scores.reidentification(entry.table, inference.table),
                                      scores.trace_inference(team.original, inference.traces, distances=d))
            reid, trace = done[other.attack]
            pairs.append({"team": team.name, "attacker": other.name, "attack": other.attack, "reid": reid, "trace": trace})
        utility = entry.row["utility"]
        valid = utility >= scores.S_REQ
        own = [p for p in pairs if p["team"] == team.name]
        standings.append({"team": team.name, "utility": utility, "valid": valid,
                          "reid_min": min(p["reid"] for p in own) if valid else 0.0,
                          "trace_min": min(p["trace"] for p in own) if valid else 0.0})
    table = pd.DataFrame(standings)
    table["rank"] = table["trace_min"].rank(ascending=False, method="min").astype(int)
    return pd.DataFrame(pairs), table.sort_values(["rank", "team"]).reset_index(drop=True)


#: the columns of a roster: a team's name, its original and reference trace files, its anonymizer
#: (a spec, or its anonymized traces as a .csv) and the attack it brings
ROSTER_COLUMNS = ("team", "org", "ref", "anonymizer", "attack")


def read_roster(path: Path) -> pd.DataFrame:
    """The roster CSV (:data:`ROSTER_COLUMNS`), as text; one InputError naming what was wrong."""
    try:
        roster = pd.read_csv(path, dtype=str)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{path} is not a readable CSV file: {exc}") from None
    missing = set(ROSTER_COLUMNS) - set(roster.columns)
    if missing:
        raise InputError(f"{path} lacks column(s) {', '.join(sorted(missing))}")
    return roster


def roster_teams(roster: pd.DataFrame, base: Path, read) -> list[Team]:
    """The roster's teams, each trace file (relative to ``base``, the roster's folder) read once by
    ``read(path) -> TraceSet`` (on the contest's grid and time table)."""
    from .run import parse_anonymizer

    cache: dict[Path, TraceSet] = {}

    def load(p):
        path = (base / p) if not Path(p).is_absolute() else Path(p)
        if path not in cache:
            cache[path] = read(path)
        return cache[path]

    return [Team(row.team, load(row.org), load(row.ref),
                 load(row.anonymizer) if row.anonymizer.endswith(".csv") else parse_anonymizer(row.anonymizer),
                 row.attack.strip()) for row in roster.itertuples()]


def write_leaderboard(pairs: pd.DataFrame, standings: pd.DataFrame, out: Path, *, settings: dict,
                      overwrite: bool = False) -> None:
    """``out/``: settings.json, leaderboard.csv and pairs.csv, written whole or not at all."""
    with atomic_output(out, overwrite, directory=True) as tmp:
        (tmp / "settings.json").write_text(json.dumps(settings, indent=2))
        standings.to_csv(tmp / "leaderboard.csv", index=False, float_format="%.6f")
        pairs.to_csv(tmp / "pairs.csv", index=False, float_format="%.6f")


def describe(standings: pd.DataFrame) -> list[str]:
    """The standings in lines for people: rank, team, utility (and validity), minimum privacy scores."""
    return [f"{r.rank:>3}  {r.team:<12} utility {r.utility:.4f}{'' if r.valid else ' (invalid)'}  "
            f"reid_min {r.reid_min:.4f}  trace_min {r.trace_min:.4f}" for r in standings.itertuples()]
