"""The command line: real runs, and bad input as one line, a non-zero exit and nothing written."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from locsynth.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_prepare_info_export_pf(pf_dir, tmp_path):
    out = tmp_path / "pf"
    res = run("prepare", pf_dir, "--format", "pf", "--out", out)
    assert res.exit_code == 0, res.output
    assert (out / "train" / "meta.json").is_file() and (out / "test" / "meta.json").is_file()
    res = run("info", out / "train", "--json")
    info = json.loads(res.stdout)
    assert {k: info[k] for k in ("users", "events", "locations", "instants", "slots")} == \
        {"users": 500, "events": 15000, "locations": 400, "instants": 30, "slots": 30}
    res = run("export", out / "test", "--out", tmp_path / "test.csv")
    assert res.exit_code == 0
    csv = pd.read_csv(tmp_path / "test.csv")
    assert len(csv) == 15000 and csv.columns.tolist() == ["user_id", "datetime", "lat", "lon", "location_id"]
    # the same output again is refused, and replaced with --overwrite
    assert run("prepare", pf_dir, "--format", "pf", "--out", out).exit_code == 1
    assert run("prepare", pf_dir, "--format", "pf", "--out", out, "--overwrite").exit_code == 0


def test_pf_synthetic_needs_like(pf_dir, tmp_path):
    syn = pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv"
    res = run("prepare", syn, "--format", "pf-synthetic", "--out", tmp_path / "s")
    assert res.exit_code == 1 and "needs --like" in res.output and not (tmp_path / "s").exists()


def write_points(path, rows):
    header = "uid,datetime,lat,lng\n"
    path.write_text(header + "".join(f"{r}\n" for r in rows))
    return path


GOOD = ["u1,2024-01-01T10:00:00Z,35.0,139.0", "u1,2024-01-01T11:00:00Z,35.1,139.1",
        "u2,2024-01-01T10:30:00Z,35.05,139.05"]


@pytest.mark.parametrize("rows, extra, message", [
    (["u1,2024-01-01T10:00:00Z,35.0,139.0", "u1,2024-01-01T11:00:00Z,91.5,139.1"], [],
     "latitude 91.5 out of range [-90, 90] in {path} row 2"),
    (["u1,2024-01-01T10:00:00Z,35.0,139.0", "u1,2024-01-01T11:00:00Z,nan,139.1"], [],
     "latitude nan is not a finite number in {path} row 2"),
    (["u1,2024-01-01 10:00:00,35.0,139.0"], [], "naive timestamp"),
    ([], [], "{path}"),
    (GOOD, ["--grid", "20by20"], "--grid '20by20' is not ROWSxCOLS"),
    (GOOD, ["--split", "test=2"], "--split 'test=2'"),
    (GOOD, ["--instant", "7min"], "does not divide"),
    (GOOD, ["--duplicates", "most"], "unknown duplicate policy 'most'"),
    (GOOD, ["--time-shift", "8h"], "--time-shift must be a number of hours in [-24, 24] (e.g. 8 or -3.5), got '8h'"),
    (GOOD, ["--time-shift", "480"], "--time-shift must be a number of hours in [-24, 24]"),
    ([f"u1,{1704103200000 + 60000 * k},35.0,139.0" for k in range(3)], ["--time-unit", "s"],
     "time 1704103200000 in {path} row 1 read as unix seconds is year 55,971, outside 1990-2100; they look like "
     "milliseconds: give --time-unit 'ms'"),
    ([f"u1,{1704103200 + 60 * k},35.0,139.0" for k in range(3)], ["--time-unit", "ms"],
     "time 1704103200 in {path} row 1 read as unix milliseconds is 1970-01-20 17:21, outside 1990-2100; they look "
     "like seconds: give --time-unit 's'"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, rows, extra, message):
    path = write_points(tmp_path / "points.csv", rows)
    out = tmp_path / "out"
    res = run("prepare", path, "--format", "csv", "--out", out, "--grid", "4x4", *extra) \
        if "--grid" not in extra else run("prepare", path, "--format", "csv", "--out", out, *extra)
    assert res.exit_code == 1, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output
    assert message.format(path=path) in " ".join(res.output.split())
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["points.csv"]


def test_prepare_prints_the_hours_and_the_clock(tmp_path):
    """The summary shows the hour-of-day profile, so that a clock read hours off shows at a glance."""
    path = write_points(tmp_path / "points.csv", GOOD)
    res = run("prepare", path, "--format", "csv", "--out", tmp_path / "o", "--grid", "2x2", "--time-shift", "-3.5")
    assert res.exit_code == 0, res.output
    assert "  hour of day (UTC): |      ▅█                | 0-23 h, peak 07 h (66.7%), trough 00 h (0.0%)" \
        in res.output.replace("▁", " ")
    assert "clock: times moved -3.5 h (--time-shift)" in res.output


def test_missing_columns_and_unknown_format(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("uid,datetime,lat\nu1,2024-01-01T10:00:00Z,35.0\n")
    res = run("prepare", path, "--format", "csv", "--out", tmp_path / "o")
    assert res.exit_code == 1 and "missing column" in res.output and "lng" in res.output
    res = run("prepare", path, "--format", "shapefile", "--out", tmp_path / "o")
    assert res.exit_code == 1 and "unknown format 'shapefile'" in res.output
    assert not (tmp_path / "o").exists()


def test_csv_with_split_and_window(tmp_path):
    rows = [f"u{u},2024-01-0{d}T{h:02d}:15:00Z,35.{u},139.{h}" for u in range(10) for d in (1, 2) for h in range(6, 20)]
    path = write_points(tmp_path / "points.csv", rows)
    out = tmp_path / "o"
    res = run("prepare", path, "--format", "csv", "--out", out, "--grid", "5x5", "--window", "08:00-18:00",
              "--split", "test=0.3", "--seed", "4")
    assert res.exit_code == 0, res.output
    train = json.loads(run("info", out / "train", "--json").stdout)
    test = json.loads(run("info", out / "test", "--json").stdout)
    assert (train["users"], test["users"]) == (7, 3)
    assert train["events"] + test["events"] == 10 * 2 * 10      # 8:00-18:00 keeps 10 of 14 hours
    assert train["instants"] == 10 and train["slots"] == 5


def test_evaluate_and_compare_on_pf(pf_dir, tmp_path):
    pf = tmp_path / "pf"
    assert run("prepare", pf_dir, "--format", "pf", "--out", pf).exit_code == 0
    syn = tmp_path / "syn"
    assert run("prepare", pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv",
               "--format", "pf-synthetic", "--like", pf / "train", "--out", syn).exit_code == 0
    ev = tmp_path / "ev"
    res = run("evaluate", "--train", pf / "train", "--test", pf / "test", "--synthetic", syn, "--out", ev,
              "--attacks", "reid")
    assert res.exit_code == 0, res.output
    metrics = json.loads((ev / "metrics.json").read_text())
    assert metrics["reid_rate"]["synthetic"] == pytest.approx(0.016)
    assert "mia_advantage" not in metrics and (ev / "report.html").stat().st_size > 10_000
    ev2 = tmp_path / "ev2"   # the training traces released as they are, for a second point
    assert run("evaluate", "--train", pf / "train", "--test", pf / "test", "--synthetic", pf / "train",
               "--out", ev2, "--attacks", "none").exit_code == 0
    res = run("compare", ev, ev2, "--out", tmp_path / "cmp", "--privacy", "tp_tv_top50")
    assert res.exit_code == 0, res.output
    table = pd.read_csv(tmp_path / "cmp" / "compare.csv", index_col=0)
    assert {"ev", "ev2", "Training", "Uniform"} <= set(table.index)
    assert (tmp_path / "cmp" / "tradeoff.png").read_bytes()[:4] == b"\x89PNG"
    # an existing output is refused
    res = run("evaluate", "--train", pf / "train", "--test", pf / "test", "--synthetic", syn, "--out", ev)
    assert res.exit_code == 1 and "exists" in res.output


def test_progress_is_written_as_lines_when_output_is_not_a_terminal(tmp_path, monkeypatch):
    """In a log file or a notebook no bar is drawn: plain lines say the step, done/total, elapsed
    time and what is left (#25); --quiet silences them."""
    from locsynth.cli import common as cli_common
    from locsynth.data.simulate import simulate

    simulate(40, seed=1).save(tmp_path / "city")
    monkeypatch.setattr(cli_common, "LINE_EVERY", 0.0)
    res = run("fit", "ppmtf", tmp_path / "city", "--iterations", "3", "--out", tmp_path / "m")
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stdout.splitlines() if line.startswith("fitting ppmtf")]
    assert lines and "3/3 (100%)" in lines[-1] and "elapsed" in lines[-1]
    assert "about 00:00 left" in lines[-1]
    res = run("--quiet", "fit", "ppmtf", tmp_path / "city", "--iterations", "3", "--out", tmp_path / "q")
    assert res.exit_code == 0 and not [line for line in res.stdout.splitlines() if line.startswith("fitting ppmtf")]


def test_a_long_silent_step_still_writes_a_line_now_and_then(monkeypatch):
    """One run of a benchmark can take minutes without a report: the plain lines keep coming
    (every HEARTBEAT seconds) while a task is unfinished, and stop once it is done."""
    import time

    from locsynth.cli import common as cli_common

    lines = []
    monkeypatch.setattr(cli_common, "say", lines.append)
    with cli_common._Lines(every=0.01, heartbeat=0.05) as bar:
        task = bar.add_task("b200 dptrip", total=3)
        time.sleep(0.3)
        assert lines and lines[-1].startswith("b200 dptrip: 0/3 (0%)") and "elapsed" in lines[-1]
        bar.update(task, completed=3)
        time.sleep(0.05)
        quiet_from = len(lines)
        time.sleep(0.2)
    assert len(lines) == quiet_from


@pytest.mark.parametrize("terminal", [False, True])
def test_a_new_step_does_not_inherit_the_last_steps_total(monkeypatch, terminal):
    """The demo's SGLT counted 124,750 pairs, then clustered (no count) and the next method fitted:
    neither may show the pairs' total, in the plain lines or in rich's bar."""
    from locsynth.cli import common as cli_common

    lines = []
    monkeypatch.setattr(cli_common, "say", lines.append)
    monkeypatch.setattr(cli_common, "_terminals", lambda: terminal)
    monkeypatch.setattr(cli_common, "QUIET", False)          # an earlier run's --quiet stays set
    with cli_common.progress_bar() as bar:
        task = bar.add_task("sglt: fitting", total=None)
        bar.update(task, completed=1494, total=124750, description="sglt: fitting pairs of users")
        bar.update(task, completed=0, total=None, description="sglt: clustering")
        if terminal:
            assert bar.tasks[task].total is None and bar.tasks[task].completed == 0
        else:
            assert bar.tasks[task]["total"] is None
            assert bar.line(bar.tasks[task], bar.tasks[task]["start"]) == "sglt: clustering: 00:00 elapsed"
        bar.update(task, completed=2, total=100, description="training: fitting")
        bar.update(task, completed=3)
        done = bar.tasks[task].completed if terminal else bar.tasks[task]["completed"]
        total = bar.tasks[task].total if terminal else bar.tasks[task]["total"]
        assert (done, total) == (3, 100)


def test_a_method_given_data_it_is_not_made_for_says_so(tmp_path):
    """Trips to a method for daily traces: one line before it starts, from the tags."""
    from helpers import trip_set

    trip_set([[0, 1, 2], [1, 2], [2, 1, 0]], [8, 9, 10], cols=3).save(tmp_path / "trips")
    res = run("fit", "tpm", tmp_path / "trips", "--out", tmp_path / "m")
    assert res.exit_code == 0, res.output
    assert "note: tpm is made for users' daily traces; these are 3 trips" in res.stdout
    res = run("fit", "ngram", tmp_path / "trips", "--out", tmp_path / "n")
    assert res.exit_code == 0 and "note:" not in res.stdout


def test_loading_a_ppmtf_model_leaves_the_metrics_libraries_unloaded():
    """`locsynth sample` and `pdtest` wait for every import: PPMTF's modules use one transition
    count from the metrics, which must not bring scipy.sparse or scikit-learn with it."""
    import subprocess
    import sys

    code = ("import sys, locsynth.cli, locsynth.synth.ppmtf.model, locsynth.metrics.transitions; "
            "print(sorted(m for m in ('scipy.sparse', 'sklearn') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_evaluate_and_dp_noise_leave_pot_scipy_stats_and_sklearn_unloaded():
    """A first `evaluate` imported POT (3.3 s, with torch and scikit-learn) for TM-SWD's random
    directions and scipy.stats (0.6 s) for the attack's Clopper-Pearson bounds; every DP mechanism
    imported OpenDP's scikit-learn extras (0.7 s) with its prelude."""
    import subprocess
    import sys

    code = ("import sys; import numpy as np; from locsynth.data.simulate import simulate; "
            "from locsynth.evaluation.evaluate import evaluate; from locsynth.privacy.laplace import laplace; "
            "train, test = simulate(60, seed=1).split(0.5, seed=0); evaluate(train, test, test); "
            "laplace(np.zeros(3), 1.0, 1.0); "
            "print(sorted(m for m in ('ot', 'scipy.stats', 'sklearn', 'torch', 'opendp.extras') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_estimate_leaves_out_the_first_units_one_time_costs(monkeypatch):
    """Issue #36: a fresh install's first Gibbs sweep includes numba compiling its kernels (18 s), the
    others take 0.2 s: the estimate after two sweeps is seconds, not 30 minutes."""
    import time

    from locsynth.cli import common as cli_common

    clock = iter([0.0, 18.0, 18.2])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    lines = []
    monkeypatch.setattr(cli_common, "say", lines.append)
    bar = cli_common._Lines(every=0.0, heartbeat=1e9)
    task = bar.add_task("fitting ppmtf", total=100)
    bar.update(task, completed=1, description="fitting ppmtf training RMSE 0.9")
    assert lines[-1] == "fitting ppmtf training RMSE 0.9: 1/100 (1%), 00:18 elapsed"
    bar.update(task, completed=2, description="fitting ppmtf training RMSE 0.5")
    assert lines[-1] == "fitting ppmtf training RMSE 0.5: 2/100 (2%), 00:18 elapsed, about 00:20 left"


def test_library_errors_name_parameters_and_the_command_line_its_flags(tmp_path):
    """Issue #36: the library names a parameter (`grid`), the command line the flag it has for it
    (--grid); a name the running command has no option for loses its quotes."""
    from locsynth import InputError
    from locsynth.cli.common import as_flags
    from locsynth.data.prepare import parse_grid

    with pytest.raises(InputError, match="^`grid` '4' is not ROWSxCOLS"):
        parse_grid("4")
    res = run("prepare", tmp_path, "--format", "csv", "--grid", "4", "--out", tmp_path / "x")
    assert res.exit_code == 1 and "--grid '4' is not ROWSxCOLS" in res.output and "`" not in res.output
    assert as_flags("give `dp_epsilon` with `pois`") == "give dp_epsilon with pois"      # no command running


def test_the_attacks_sample_sizes_take_none_as_their_help_says(tmp_path):
    """--dmia-targets, --sniff-targets and --outlier-pool: 'none' is every trajectory (issue 48: a
    number-typed option refused it before the option's own parser saw it); a bad value is one line."""
    from helpers import trip_set

    rng = np.random.default_rng(0)
    paths = [list(np.clip(np.cumsum(rng.choice([-1, 1], rng.integers(2, 6))) + rng.integers(0, 8), 0, 7))
             for _ in range(40)]
    for name, rows in (("train", paths[:28]), ("test", paths[28:])):
        trip_set(rows, [8] * len(rows), cols=8).save(tmp_path / name)
    args = ["evaluate", "--train", tmp_path / "train", "--test", tmp_path / "test", "--synthetic", tmp_path / "train",
            "--attacks", "distance_mia,copies,sniffing,outliers"]
    res = run(*args, "--out", tmp_path / "ev", "--dmia-targets", "none", "--sniff-targets", "none",
              "--outlier-pool", "none")
    assert res.exit_code == 0, res.output
    metrics = json.loads((tmp_path / "ev" / "metrics.json").read_text())
    assert {"dmia_tpr_at_fpr_0001", "copy_p_value", "sniff_advantage", "outlier_advantage"} <= set(metrics)
    assert run(*args, "--out", tmp_path / "ev2", "--dmia-targets", "5").exit_code == 0
    res = run(*args, "--out", tmp_path / "ev3", "--dmia-targets", "many")
    assert res.exit_code == 1 and "dmia_targets must be a whole number >= 1, got 'many'" in res.output


# -- faults: each one line, a non-zero exit and nothing written (issue 53) ---------------------------

def one_line(res) -> str:
    """The one error line of a failed command, its spaces folded (rich wraps long lines)."""
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    return " ".join(res.output.split())


@pytest.fixture
def tpm_model(tmp_path):
    from locsynth.data.simulate import simulate
    from locsynth.synth.tpm import TPM

    TPM(epsilon=1.0).fit(simulate(30, seed=1)).save(tmp_path / "tpm")
    return tmp_path / "tpm"


def test_a_damaged_model_is_one_line_and_info_finds_it(tmp_path, tpm_model):
    """A truncated arrays.npz raised BadZipFile when sampled, and `info` said nothing of it."""
    arrays = tpm_model / "arrays.npz"
    assert run("info", tpm_model).exit_code == 0
    whole = arrays.read_bytes()
    arrays.write_bytes(whole[: len(whole) // 2])                   # cut short, as by a full disk
    for args in (("info", tpm_model), ("sample", tpm_model, "--out", tmp_path / "s")):
        assert f"error: {arrays} is damaged (BadZipFile: " in one_line(run(*args))
    middle = len(whole) // 2                                       # the directory intact, a member altered
    arrays.write_bytes(whole[:middle] + bytes([whole[middle] ^ 0xFF]) + whole[middle + 1:])
    assert "fails its checksum): fit the model again" in one_line(run("info", tpm_model))
    arrays.write_bytes(whole)
    (tpm_model / "users.parquet").unlink()
    assert f"error: {tpm_model / 'users.parquet'} is missing" in one_line(run("info", tpm_model))
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "error: seed must be a whole number >= 0, got -1"),
    (["--users", "10000000000"], "error: n = 10,000,000,000 users is more than the 2,147,483,647 traces a set holds"),
    (["--users", "0"], "error: n must be at least 1, got 0"),
])
def test_sample_refuses_a_bad_seed_or_size_in_one_line(tmp_path, tpm_model, args, message):
    assert message in one_line(run("sample", tpm_model, "--out", tmp_path / "s", *args))
    assert not (tmp_path / "s").exists()


def test_running_out_of_memory_while_sampling_is_one_error_naming_the_size(tpm_model, monkeypatch):
    """numpy refuses an array beyond the memory before filling it (1e9 TPM users: 179 GiB)."""
    from locsynth import InputError
    from locsynth.synth.base import Synthesizer
    from locsynth.synth.tpm import TPM

    model = Synthesizer.load(tpm_model)

    def too_big(*args, **kwargs):
        raise MemoryError("Unable to allocate 179. GiB for an array with shape (1000000000, 24)")

    monkeypatch.setattr(TPM, "_sample", too_big)
    with pytest.raises(InputError, match=r"^sampling 1,000,000,000 users from tpm needs more memory than this "
                                         r"machine has \(Unable to allocate 179. GiB .*\): ask for fewer \(n\)$"):
        model.sample(1_000_000_000)
    with pytest.raises(InputError, match=r"^sampling \d[\d,]* users \(the DP count of training users\) from tpm"):
        model.sample()


def test_prepare_refuses_a_grid_too_large_before_making_it_and_a_folder_for_a_file(tmp_path):
    cabs = tmp_path / "cabs"
    cabs.mkdir()
    (cabs / "new_abc.txt").write_text("".join(f"37.7{k} -122.4{k} 1 {1211000000 + 60 * k}\n" for k in range(5)))
    msg = one_line(run("prepare", cabs, "--format", "cab-trips", "--cell-m", "0.01", "--out", tmp_path / "o"))
    assert re.search(r"error: the grid of --cell-m = 0.01 m cells over the box \([\d,]+ x [\d,]+\) has [\d,]+ cells "
                     r"\([\d.]+ TiB to make\), more than the 2,147,483,647 locations a space holds", msg)
    msg = one_line(run("prepare", cabs, "--format", "csv", "--out", tmp_path / "o"))
    assert f"error: {cabs} is a folder; this format reads one file" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cabs"]
