"""Team data for a contest (paper 003 §3.3, Appendices A and D): PPMTF+ trained once on a training
TraceSet, then, for each team, m virtual users with homes whose traces cover the reference days
followed by the original days.

* **Frame** (§3.3, Table 1): a 32 x 32 grid and 20 instants a day, 8:00-18:00 every 30 minutes;
  the training set must already be on it (``locsynth prepare --grid 32x32 --instant 30min
  --window 08:00-18:00``), since PPMTF+ generates on its training set's regions and instants.
* **Virtual users** (Appendix A, eq. 4): each team's m feature vectors are drawn afresh from the
  trained N(mu_A, Lambda_A^-1) with the team's own seed, so the teams share no virtual user and
  no virtual user is a training user.
* **Homes** (Appendix D): each virtual user's home is drawn from the training population of the
  day's first slot and its visit count there raised (``home_boost``) in the first and last slots.
  The organisers trained on 6:00-18:00 and cut 8:00-18:00 afterwards so that the reference traces
  do not give every home away; here the model is trained on the contest's day itself, so the
  boost falls on 8:00-8:30 and 17:30-18:00. Every day is its own trace, started from the first
  slot's boosted distribution, so a user starts a day at home (as Figure 19's users do) with
  probability about boost / (boost + the slot's visit counts) and leaves as the chain moves on;
  the evening boost is weak, since the chain (Metropolis-Hastings with PPMTF's transition
  proposals) rarely proposes the home within the day's last step. The boost is a count, so its
  effect depends on the training set's scale: the organisers' 20 puts about 97 % of the days of a
  model trained on PF Tokyo at home at 8:00, but about 20 % of one trained on 200 Osaka users;
  :meth:`Team.home_share` measures it (``contest init`` prints it) and ``home_boost`` tunes it.
* **Reference and original traces** (§3.3 and Appendix A): the same virtual users on different
  days: ``reference_days + original_days`` day-long traces per virtual user from its one feature
  vector and home; the first days are the reference traces (what the attackers know), the
  following days the original traces (what the team anonymizes). The paper used 20 + 20 days;
  the organisers' Osaka files have 2 + 2 (time ids 1-40 and 41-80), the default here.
* **Regions**: ``info_region.csv`` of the training grid; its hospitals are the grid's cells of
  category ``"hospital"``, or those of an organisers' ``info_region.csv`` of the same grid
  (``hospitals_from``); a grid without that category has no hospital (every flag 0), and the
  trace-inference score then weighs every region alike.

User ids are 1..m in every team (pseudonyms are m + 1..2m, pseudonymize.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..data.space import Grid
from ..core.validation import check_count
from ..data.traces import TraceSet
from ..core.progress import reporter
from .files import HOSPITAL, TimeTable, default_times, hospitals, read_regions

GRID = (32, 32)
INSTANT = timedelta(minutes=30)
DAY_START = timedelta(hours=8)
INSTANTS_PER_DAY = 20


@dataclass
class Team:
    """One team's data: ``name`` (team001, ...), its sampling seed, reference and original traces,
    and the virtual users' homes (the organiser's secret, never written to the team's files)."""

    name: str
    seed: int
    reference: TraceSet
    original: TraceSet
    homes: np.ndarray

    def home_share(self) -> float:
        """The share of (user, day) whose day starts (8:00) at the user's home (Appendix D, Figure 19)."""
        start = [x.loc[x.t % x.time.instants_per_day == 0] for x in (self.reference, self.original)]
        users = [x.user[x.t % x.time.instants_per_day == 0] for x in (self.reference, self.original)]
        return float(np.mean(np.concatenate(start) == self.homes[np.concatenate(users)]))


@dataclass
class Contest:
    """Every team's data on one grid and time table."""

    grid: Grid
    times: TimeTable
    teams: list[Team]
    model: object


def check_frame(space, time, what: str) -> None:
    """An InputError naming everything in which ``space`` and ``time`` differ from the contest's frame."""
    wrong = []
    if not isinstance(space, Grid):
        wrong.append(f"its space is {space.n_locations} {space.kind} locations, not a grid")
    elif (space.rows, space.cols) != GRID:
        wrong.append(f"its grid is {space.rows} x {space.cols}")
    if time.instant != INSTANT:
        wrong.append(f"its instants are {int(time.instant.total_seconds() // 60)} min long")
    if time.window_start != DAY_START:
        start = int(time.window_start.total_seconds() // 60)
        wrong.append(f"its day starts at {start // 60:02d}:{start % 60:02d}")
    if time.instants_per_day != INSTANTS_PER_DAY:
        wrong.append(f"it has {time.instants_per_day} instants a day")
    if wrong:
        raise InputError(f"{what} is not on the contest's frame (paper 003 §3.3: a 32 x 32 grid and 20 instants a "
                         f"day, 8:00-18:00 every 30 minutes): {'; '.join(wrong)}. Prepare it with "
                         "locsynth prepare ... --grid 32x32 --instant 30min --window 08:00-18:00")


def check_counts(**counts: int) -> None:
    """An InputError naming the first count (teams, users, days) that is not a whole number >= 1."""
    for name, value in counts.items():
        check_count(value, f"the number of {name.replace('_', ' ')}")


def contest_grid(space: Grid, hospitals_from=None) -> Grid:
    """The training grid with its hospitals: the cells of category ``"hospital"``, or those of the
    ``info_region.csv`` at ``hospitals_from`` (which must describe the same grid)."""
    if hospitals_from is None:
        flags = hospitals(space)
    else:
        other = read_regions(hospitals_from)
        if (other.rows, other.cols) != (space.rows, space.cols) or not np.allclose(other.bbox, space.bbox, atol=1e-6):
            raise InputError(f"{hospitals_from} describes a {other.rows} x {other.cols} grid over {_box(other.bbox)}, "
                             f"not the training set's {space.rows} x {space.cols} grid over {_box(space.bbox)}")
        flags = hospitals(other)
    category = np.where(flags, HOSPITAL, "other").astype(object)
    return Grid(space.rows, space.cols, space.bbox, category=category)


def check_model(model, where: str) -> None:
    """A model ``contest init`` can make teams with: virtual users (a team's users are nobody in
    the training set) with homes (Appendix D: the sample option ``home_regions``), as PPMTF+ makes
    them; an InputError names what the model at ``where`` lacks."""
    if not (model.tags.virtual_users and "home_regions" in getattr(model, "sample_options", {})):
        raise InputError(f"{where} holds a {model.name} model: a contest's teams need a method of virtual users with "
                         f"homes (the sample option home_regions), such as ppmtf-plus")


def load_model(path) -> object:
    """The model at ``path`` (a directory ``locsynth fit`` wrote), checked by :func:`check_model`."""
    from ..synth.base import Synthesizer

    model = Synthesizer.load(path)
    check_model(model, str(path))
    return model


def load_training(path) -> TraceSet:
    """The training TraceSet at ``path``, checked by :func:`check_frame` to be on a contest's frame."""
    train = TraceSet.load(path)
    check_frame(train.space, train.time, str(path))
    return train


def fit_model(train: TraceSet, *, progress=None, **params):
    """PPMTF+ trained on ``train`` (Appendix A, step (i)), after checking the frame; ``params`` are
    its hyperparameters (its own defaults for the rest)."""
    from ..synth.ppmtf.model import PPMTFPlus

    check_frame(train.space, train.time, "the training set")
    return PPMTFPlus(**params).fit(train, progress=progress)


def team_seed(seed: int, k: int) -> int:
    """Team ``k``'s sampling seed (0-based), a function of the contest seed and k only."""
    return int(np.random.SeedSequence(seed, spawn_key=(70, k)).generate_state(1)[0])


def team_traces(model, users: int, times: TimeTable, *, seed: int, home_boost: float = 20.0,
                grid: Grid | None = None) -> tuple[TraceSet, TraceSet, np.ndarray]:
    """(reference, original, homes) of ``users`` new virtual users (Appendix A steps (ii)-(iii)
    with Appendix D's homes): one day-long trace per virtual user and day of ``times`` (its
    feature vector and home fixed), the first ``ref`` days the reference, the rest the original."""
    k = times.axis.instants_per_day
    days = int(times.instant.max()) // k + 1
    synthetic = model.sample(users, days=1, traces_per_user=days, seed=seed, home_regions=True, home_boost=home_boost)
    row = synthetic.user.astype(np.int64)                   # trace row q * days + day, users in order
    user, day = np.divmod(row, days)
    t = day * k + synthetic.t % k
    ids = pd.DataFrame({"user_id": np.arange(1, users + 1)})
    reference_days = int(np.count_nonzero(times.part == "ref")) // k
    out = []
    for part in (day < reference_days, day >= reference_days):
        out.append(TraceSet.from_events(user[part], t[part], synthetic.loc[part], ids,
                                        synthetic.space if grid is None else grid,
                                        times.axis, {"source": "ppmtf-plus", "contest_seed": int(seed)}))
    homes = synthetic.users["home"].to_numpy()[::days].astype(np.int64)
    return out[0], out[1], homes


def make_contest(model, *, teams: int, users: int, reference_days: int = 2, original_days: int = 2, seed: int = 0,
                 home_boost: float = 20.0, hospitals_from=None, progress=None) -> Contest:
    """Every team's data from a trained PPMTF+ ``model``; ``progress(done, total, team name)`` before
    each team (core/progress.py)."""
    check_counts(teams=teams, users=users, reference_days=reference_days, original_days=original_days)
    check_frame(model.space_, model.time_, "the model's training set")
    grid = contest_grid(model.space_, hospitals_from)
    times = default_times(days=reference_days + original_days, reference_days=reference_days)
    out, report = [], reporter(progress)
    for k in range(teams):
        name = f"team{k + 1:03d}"
        report(k, teams, name)
        s = team_seed(seed, k)
        reference, original, homes = team_traces(model, users, times, seed=s, home_boost=home_boost, grid=grid)
        out.append(Team(name, s, reference, original, homes))
    return Contest(grid, times, out, model)


def user_visits(*sets: TraceSet) -> np.ndarray:
    """(users, regions): each user's visit distribution over the regions, over all the given sets
    (one user per row of each, the same users in the same order)."""
    n, L = sets[0].n_traces, sets[0].space.n_locations
    counts = np.zeros((n, L))
    for ts in sets:
        np.add.at(counts, (ts.user, ts.loc), 1.0)
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)


def _tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(p - q).sum(axis=1).mean())


def diversity(contest: Contest) -> dict:
    """How far the teams' data are from each other (paper 003 Appendix B, Figure 17): per pair of
    consecutive teams, Same-TV is the mean total variation between the population (visit)
    distributions of user i of one team and user i of the other, Diff-TV between user i and user
    m/2 + i (i < m/2); Same-TV below Diff-TV would mean the i-th users of two teams are alike (no
    diversity). Also, within each team, the TV between a user's reference and original days, and
    between her reference days and another user's original days (what the attacks exploit)."""
    visits = [user_visits(t.reference, t.original) for t in contest.teams]
    half = visits[0].shape[0] // 2
    pairs = [{"teams": [a.name, b.name], "same_tv": _tv(visits[k][:half], visits[k + 1][:half]),
              "diff_tv": _tv(visits[k][:half], visits[k + 1][half:2 * half])}
             for k, (a, b) in enumerate(zip(contest.teams, contest.teams[1:]))]
    within = []
    for t in contest.teams:
        ref, org = user_visits(t.reference), user_visits(t.original)
        within.append({"team": t.name, "same_user_tv": _tv(ref, org), "other_user_tv": _tv(ref, np.roll(org, 1, axis=0))})
    out = {"pairs": pairs, "within_teams": within}
    if pairs:
        out["same_tv"] = float(np.mean([p["same_tv"] for p in pairs]))
        out["diff_tv"] = float(np.mean([p["diff_tv"] for p in pairs]))
    return out


def write_contest(contest: Contest, out, *, overwrite: bool = False, meta: dict | None = None) -> dict:
    """``out/``: info_region.csv, info_time.csv, reftraces_teamNNN.csv and orgtraces_teamNNN.csv for
    every team (the organisers' formats, contest/files.py) and contest.json (how it was made, with
    the teams' :func:`diversity`), written atomically: an interrupted run leaves no directory.
    Returns what contest.json holds."""
    import json
    from pathlib import Path

    from ..core.files import atomic_output
    from .files import write_regions, write_times, write_traces

    out = Path(out)
    with atomic_output(out, overwrite, directory=True) as tmp:
        write_regions(contest.grid, tmp / "info_region.csv")
        write_times(contest.times, tmp / "info_time.csv")
        for team in contest.teams:
            write_traces(team.reference, tmp / f"reftraces_{team.name}.csv", contest.times)
            write_traces(team.original, tmp / f"orgtraces_{team.name}.csv", contest.times)
        record = {"format": "locsynth.contest", "synthesizer": "ppmtf-plus (paper 003 Appendices A and D)",
                  "model": contest.model.get_params(), "training": contest.model.training_,
                  "hospitals": int(hospitals(contest.grid).sum()),
                  "teams": [{"name": t.name, "seed": t.seed, "users": t.original.n_traces,
                             "days_starting_at_home": round(t.home_share(), 4),
                             "reference": f"reftraces_{t.name}.csv", "original": f"orgtraces_{t.name}.csv"}
                            for t in contest.teams],
                  "diversity": diversity(contest),
                  **(meta or {})}
        (tmp / "contest.json").write_text(json.dumps(record, indent=2, default=str))
    return record


def describe(contest: Contest, record: dict) -> list[str]:
    """What a contest holds, in lines for people: its teams, users and time ids, its hospitals, the
    days that start at home per team, and the teams' diversity (``record``: what
    :func:`write_contest` returned)."""
    k, days = INSTANTS_PER_DAY, contest.times.instant.size // INSTANTS_PER_DAY
    reference_days = int((contest.times.part == "ref").sum()) // k
    n_hosp = int(hospitals(contest.grid).sum())
    lines = [f"{len(contest.teams)} teams x {contest.teams[0].original.n_traces} virtual users, time ids "
             f"1-{reference_days * k} reference and {reference_days * k + 1}-{days * k} original; "
             + (f"{n_hosp} hospital regions" if n_hosp else "no hospital regions (the grid has no 'hospital' "
                "category; every hospital flag is 0: pass `hospitals` info_region.csv to take them from the "
                "organisers' grid)")]
    lines += [f"{team.name}: {team.home_share():.0%} of the days start at home (Appendix D; `home_boost` raises it)"
              for team in contest.teams]
    div = record["diversity"]
    if "same_tv" in div:
        lines.append(f"diversity (paper 003 App. B): Same-TV {div['same_tv']:.4f}, Diff-TV {div['diff_tv']:.4f} "
                     "between the i-th users of two teams and between the i-th and the (m/2 + i)-th (alike would "
                     "mean no diversity)")
    lines += [f"{w['team']}: TV between a user's reference and original days {w['same_user_tv']:.4f}, and another "
              f"user's {w['other_user_tv']:.4f}" for w in div["within_teams"]]
    return lines


def _box(bbox) -> str:
    return "lat {:.4f}-{:.4f}, lon {:.4f}-{:.4f}".format(*bbox)
