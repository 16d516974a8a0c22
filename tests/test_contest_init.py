"""``locsynth contest init`` (paper 003 §3.3, Appendices A and D): PPMTF+ team data in the organisers'
formats, checked end to end on a small run (a few hundred virtual users, a few Gibbs sweeps) and
run through ``contest run``."""

from datetime import date

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from locsynth import InputError
from locsynth.cli import app
from locsynth.contest import teamdata
from locsynth.contest.files import default_times, hospitals, read_regions, read_times, read_traces
from locsynth.data.space import Grid
from locsynth.data.timeaxis import TimeAxis
from locsynth.data.traces import TraceSet

USERS = 150


@pytest.fixture(scope="module")
def training(data_dir, tmp_path_factory):
    """200 users of the organisers' Osaka reference traces as a training TraceSet (already on the
    contest's frame: 32 x 32 regions with 37 hospitals, 8:00-18:00 every 30 minutes)."""
    d = data_dir / "pwscup2019-osaka"
    grid, times = read_regions(d / "info_region.csv"), read_times(d / "info_time.csv")
    train = read_traces(d / "reftraces_team001_data01_IDP.csv", grid, times).select_users(np.arange(200))
    path = tmp_path_factory.mktemp("init") / "train"
    train.save(path)
    return d, path, train


@pytest.fixture(scope="module")
def contest_dir(training, tmp_path_factory):
    d, path, train = training
    out = tmp_path_factory.mktemp("init") / "contest"
    result = CliRunner().invoke(app, ["contest", "init", str(path), "--teams", "2", "--users", str(USERS),
                                      "--iterations", "3", "--seed", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "37 hospital regions" in result.output
    return out


def test_init_writes_the_organisers_files(training, contest_dir):
    d = training[0]
    names = sorted(p.name for p in contest_dir.iterdir() if p.name != ".locsynth")
    assert names == ["contest.json", "info_region.csv", "info_time.csv", "orgtraces_team001.csv",
                     "orgtraces_team002.csv", "reftraces_team001.csv", "reftraces_team002.csv"]
    # the same time table and grid (with its hospitals) as the organisers' Osaka files, byte for byte
    assert (contest_dir / "info_time.csv").read_bytes() == (d / "info_time.csv").read_bytes()
    assert (pd.read_csv(contest_dir / "info_region.csv")["hospital"]
            == pd.read_csv(d / "info_region.csv")["hospital"]).all()
    grid, times = read_regions(contest_dir / "info_region.csv"), read_times(contest_dir / "info_time.csv")
    for team in ("team001", "team002"):
        ref = pd.read_csv(contest_dir / f"reftraces_{team}.csv")
        org = pd.read_csv(contest_dir / f"orgtraces_{team}.csv")
        assert list(ref.columns) == ["user_id", "time_id", "reg_id"]
        # every virtual user 1..m: 40 reference events at time ids 1-40 and 40 original ones at 41-80
        for frame, first in ((ref, 1), (org, 41)):
            assert sorted(frame["user_id"].unique()) == list(range(1, USERS + 1))
            assert (frame.groupby("user_id")["time_id"].apply(list) == [list(range(first, first + 40))] * USERS).all()
            assert frame["reg_id"].between(1, 1024).all()
        read_traces(contest_dir / f"orgtraces_{team}.csv", grid, times)
    # different seeds, different virtual users
    a, b = (pd.read_csv(contest_dir / f"orgtraces_team00{k}.csv")["reg_id"] for k in (1, 2))
    assert (a != b).mean() > 0.5


def test_init_is_seeded_and_users_start_their_days_at_home(training):
    train = training[2]
    model = teamdata.fit_model(train, iterations=2, seed=0)
    times = default_times()
    ref1, org1, homes = teamdata.team_traces(model, 100, times, seed=5, home_boost=1000)
    ref2, org2, _ = teamdata.team_traces(model, 100, times, seed=5, home_boost=1000)
    assert np.array_equal(org1.loc, org2.loc) and np.array_equal(ref1.loc, ref2.loc)
    # Appendix D: the home, boosted in the first slot, is where the days start; the same users on
    # the reference and the original days
    assert teamdata.Team("t", 5, ref1, org1, homes).home_share() > 0.8
    weak = teamdata.Team("t", 5, *teamdata.team_traces(model, 100, times, seed=5, home_boost=0))
    assert weak.home_share() < 0.1


def test_contest_run_works_on_init_output(contest_dir, tmp_path):
    args = ["contest", "run", "--org", str(contest_dir / "orgtraces_team001.csv"),
            "--ref", str(contest_dir / "reftraces_team001.csv"), "--regions", str(contest_dir / "info_region.csv"),
            "--times", str(contest_dir / "info_time.csv"), "--anonymizers", "none;cheat:1", "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "r" / "results.csv").set_index("anonymizer")
    assert table.loc["none", "utility"] == 1.0
    # the reference traces say who is who: far better than a random guess among 150 (reid privacy 0.993)
    assert table.loc["none", ["reid_visitprob", "reid_homeprob", "reid_fuzzy"]].min() < 0.9
    assert table.loc["cheat:1", "reid_fuzzy"] > table.loc["none", "reid_fuzzy"]
    analyses = pd.read_csv(tmp_path / "r" / "analyses.csv")
    assert analyses["anonymizer"].tolist() == ["none", "cheat:1", "(reference)", "(uniform)"]


def test_init_names_what_is_wrong_with_the_training_frame(tmp_path):
    axis = TimeAxis.build(date(2019, 1, 7), "Asia/Tokyo", "20min", None, ("09:00", "19:00"))
    bad = TraceSet.from_events(np.zeros(3, int), np.arange(3), np.array([0, 1, 2]), pd.DataFrame({"user_id": [1]}),
                               Grid(20, 20, (35.65, 35.75, 139.68, 139.80)), axis)
    with pytest.raises(InputError, match=r"grid is 20 x 20; its instants are 20 min long; its day starts at 09:00; "
                                         r"it has 30 instants a day\. Prepare it with locsynth prepare"):
        teamdata.fit_model(bad)
    bad.save(tmp_path / "bad")
    result = CliRunner().invoke(app, ["contest", "init", str(tmp_path / "bad"), "--out", str(tmp_path / "c")])
    assert result.exit_code == 1 and "32 x 32 grid" in result.output and not (tmp_path / "c").exists()
    result = CliRunner().invoke(app, ["contest", "init", str(tmp_path / "bad"), "--users", "0", "--out", str(tmp_path / "c")])
    assert result.exit_code == 1 and "number of users must be at least 1" in result.output


def test_hospitals_come_from_a_matching_grid_or_are_none(training, tmp_path):
    d, path, train = training
    plain = Grid(32, 32, train.space.bbox)
    assert not hospitals(teamdata.contest_grid(plain)).any()
    assert hospitals(teamdata.contest_grid(plain, d / "info_region.csv")).sum() == 37
    with pytest.raises(InputError, match="not the training set's 32 x 32 grid"):
        teamdata.contest_grid(plain, d / "tokyo-preliminary" / "info_region.csv")


def test_init_reports_the_teams_diversity(contest_dir):
    """Paper 003 Appendix B (Figure 17): PPMTF+ draws every virtual user afresh, so the i-th users of
    two teams are no more alike than the i-th and another (Same-TV about Diff-TV); within a team a
    user's reference days are closer to her own original days than to another user's."""
    import json

    div = json.loads((contest_dir / "contest.json").read_text())["diversity"]
    assert div["pairs"][0]["teams"] == ["team001", "team002"]
    assert 0 < div["same_tv"] <= 1 and 0 < div["diff_tv"] <= 1
    assert abs(div["same_tv"] - div["diff_tv"]) < 0.05
    for w in div["within_teams"]:
        assert w["same_user_tv"] < w["other_user_tv"]


def test_diversity_by_hand():
    """Two teams of two users on three regions: the TVs computed by hand."""
    from locsynth.contest.teamdata import Contest, Team, diversity
    from helpers import traceset

    def team(name, ref, org):
        return Team(name, 0, traceset(ref, cols=3), traceset(org, cols=3), np.zeros(2, np.int64))

    # team 1: user 0 always at 0, user 1 always at 2; team 2: user 0 half at 0 half at 1, user 1 at 2
    one = team("a", [[(0, 0)], [(0, 2)]], [[(1, 0)], [(1, 2)]])
    two = team("b", [[(0, 0)], [(0, 2)]], [[(1, 1)], [(1, 2)]])
    div = diversity(Contest(None, None, [one, two], None))
    # m/2 = 1: Same-TV = TV(a0, b0) = TV((1,0,0), (.5,.5,0)) = 0.5; Diff-TV = TV(a0, b1) = TV((1,0,0), (0,0,1)) = 1
    assert div["same_tv"] == pytest.approx(0.5) and div["diff_tv"] == pytest.approx(1.0)
    # within b, averaged over users: user 0's reference (1,0,0) against her original (0,1,0): 1, user 1's
    # (0,0,1) against hers (0,0,1): 0, so 0.5; against the other user's original days: 1 and 1
    assert div["within_teams"][1] == {"team": "b", "same_user_tv": 0.5, "other_user_tv": 1.0}
    assert div["within_teams"][0]["same_user_tv"] == 0.0


def test_contest_init_asks_for_a_capability_not_a_class():
    """Issue #36: contest init takes any model of virtual users with homes (the capability), and
    names what another model lacks."""
    from locsynth.data.simulate import simulate
    from locsynth.synth.baselines import Uniform

    model = Uniform().fit(simulate(10, seed=1))
    with pytest.raises(InputError, match="holds a uniform model: .*virtual users with homes"):
        teamdata.check_model(model, "m")
