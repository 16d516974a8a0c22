"""Outputs (issue 53, part 3): ``--overwrite`` replaces only what locsynth wrote, never an input of
the command, a folder that holds anything else or a non-regular file; a command claims its output
(checks and locks it) before its work; a full or read-only disk is one line; a rerun removes what
an interrupted write left."""

import errno
import os
import re
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from locsynth.cli import app
from locsynth.core.errors import InputError
from locsynth.core.files import MARKER, atomic_output, check_output, lock_file
from locsynth.data.simulate import simulate

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def city(tmp_path):
    path = tmp_path / "city"
    simulate(12, seed=0).save(path)
    return path


def test_overwrite_replaces_what_locsynth_wrote(tmp_path, city):
    """Its own folder (listed by its marker), its own file (as it wrote it) and an empty folder."""
    assert run("simulate", "--users", 5, "--out", city, "--overwrite").exit_code == 0
    assert sorted(os.listdir(city)) == sorted([MARKER, "events.parquet", "locations.parquet", "meta.json",
                                               "users.parquet"])
    csv = tmp_path / "city.csv"
    assert run("export", city, "--out", csv).exit_code == 0
    res = run("export", city, "--out", csv, "--overwrite")
    assert res.exit_code == 0, res.output
    (tmp_path / "empty").mkdir()
    assert run("simulate", "--users", 5, "--out", tmp_path / "empty", "--overwrite").exit_code == 0


@pytest.mark.parametrize("make, match", [
    (lambda d: (d / "thesis.tex").write_text("\\chapter{}") and d / "thesis.tex", "is a file, not a folder"),
    (lambda d: _folder_of_csvs(d), "is not a folder locsynth wrote"),
    (lambda d: d, "is not a folder locsynth wrote"),                       # --out . (holds everything)
    (lambda d: _with_note(d / "city"), r"holds files locsynth did not write \(notes.txt\)"),
    (lambda d: _link(d), "is not a regular file or folder"),
])
def test_overwrite_never_replaces_what_the_user_has(tmp_path, city, make, match):
    target = make(tmp_path)
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_bytes()
    res = run("simulate", "--users", 5, "--out", target, "--overwrite")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert re.search(match, res.output.replace("\n", " "))
    after = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_bytes()
    assert after == before


def _folder_of_csvs(d):
    (d / "csvs").mkdir()
    (d / "csvs" / "a.csv").write_text("uid,datetime,lat,lng\n")
    return d / "csvs"


def _with_note(city):
    (city / "notes.txt").write_text("mine")
    return city


def _link(d):
    (d / "target").mkdir()
    (d / "link").symlink_to(d / "target")
    return d / "link"


def test_a_file_the_user_edited_or_a_device_is_never_replaced(tmp_path, city):
    csv = tmp_path / "out.csv"
    assert run("export", city, "--out", csv).exit_code == 0
    with csv.open("a") as f:
        f.write("my own line\n")
    res = run("export", city, "--out", csv, "--overwrite")
    assert res.exit_code == 1 and "changed since" in res.output and csv.read_text().endswith("my own line\n")
    other = tmp_path / "thesis.tex"
    other.write_text("mine")
    assert run("export", city, "--out", other, "--overwrite").exit_code == 1 and other.read_text() == "mine"
    res = run("export", city, "--out", "/dev/null", "--overwrite")
    assert res.exit_code == 1 and "not a regular file" in res.output
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_never_an_input_of_the_same_command(tmp_path, city):
    """prepare's CSV, fit's training set, sample's model, evaluate's --train; and a folder that holds one."""
    csv = tmp_path / "points.csv"
    csv.write_text("uid,datetime,lat,lng\n1,2024-01-01T08:00:00Z,35.6,139.7\n1,2024-01-01T09:00:00Z,35.61,139.71\n")
    res = run("prepare", csv, "--format", "csv", "--out", csv, "--overwrite")
    assert res.exit_code == 1 and "is an input of this command" in res.output and csv.is_file()
    res = run("fit", "uniform", city, "--out", city, "--overwrite")
    assert res.exit_code == 1 and "is an input" in res.output and (city / "meta.json").is_file()
    res = run("fit", "uniform", city, "--out", tmp_path, "--overwrite")
    assert res.exit_code == 1 and "holds" in res.output and (city / "meta.json").is_file()
    assert run("fit", "uniform", city, "--out", tmp_path / "m").exit_code == 0
    res = run("sample", tmp_path / "m", "--out", tmp_path / "m", "--overwrite")
    assert res.exit_code == 1 and (tmp_path / "m" / "model.json").is_file()
    res = run("evaluate", "--train", city, "--test", city, "--synthetic", city, "--out", city, "--overwrite")
    assert res.exit_code == 1 and "is an input" in res.output and (city / "meta.json").is_file()


def test_the_output_is_checked_before_the_work(tmp_path, city):
    """An existing output without --overwrite stops the fit before it fits (a long fit used to fail at
    its very end); a folder that cannot be written, too."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x").write_text("")
    res = run("fit", "ppmtf", city, "--out", tmp_path / "m", "--iterations", 2)
    assert res.exit_code == 1 and "exists" in res.output and "fitted" not in res.output


def test_a_read_only_or_full_disk_is_one_line(tmp_path, city, monkeypatch):
    real_open = os.open

    def read_only(path, *args, **kwargs):
        if str(path).startswith(str(tmp_path / "ro")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, *args, **kwargs)

    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(os, "open", read_only)
    res = run("fit", "ppmtf", city, "--out", tmp_path / "ro" / "m", "--iterations", 2)
    assert res.exit_code == 1 and "Read-only file system" in res.output and "fitted" not in res.output
    monkeypatch.undo()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(InputError, match="cannot write .*out.csv: No space left on device"):
        with atomic_output(tmp_path / "out.csv", False, directory=False) as tmp:
            full()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["city", "ro"]


def test_a_rerun_removes_what_an_interrupted_write_left(tmp_path, city):
    """kill -9 while writing leaves a hidden sibling (.m.XXXXXXXX); the next write of m removes it."""
    left = tmp_path / ".m.k2j4h5g6"
    left.mkdir()
    (left / "arrays.npz").write_bytes(b"\0" * 1000)
    stale = tmp_path / ".m.a1b2c3d4"
    stale.write_bytes(b"partial")
    keep = tmp_path / ".m.notes"                             # not a temporary's name: kept
    keep.write_text("mine")
    assert run("fit", "uniform", city, "--out", tmp_path / "m").exit_code == 0
    assert not left.exists() and not stale.exists() and keep.exists()
    assert not (tmp_path / ".m.lock").exists()


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from locsynth.core.files import lock_file
    with lock_file(Path(sys.argv[1]), "the test's output"):
        print("held", flush=True)
        time.sleep(60)
""")


def test_two_commands_on_one_output_the_second_is_refused(tmp_path, city):
    """A second fit on the --out of a running one is refused at once, naming the process; a lock
    whose process is gone, or is not locsynth (pid 1), is taken over."""
    lock = tmp_path / ".m.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = run("fit", "uniform", city, "--out", tmp_path / "m")
        assert res.exit_code == 1 and f"another locsynth process {holder.pid}" in res.output
        assert f"remove {lock}" in res.output.replace("\n", "") and not (tmp_path / "m").exists()
    finally:
        holder.kill()
        holder.wait()
    for stale in ("1", "999999999", '{"pid": 1, "started": 0}'):
        lock.write_text(stale)
        res = run("fit", "uniform", city, "--out", tmp_path / "m", "--overwrite")
        assert res.exit_code == 0, (stale, res.output)
        assert not lock.exists()


def test_the_lock_is_reentrant_and_leaves_with_its_holder(tmp_path):
    lock = tmp_path / ".x.lock"
    with lock_file(lock, "x"):
        with lock_file(lock, "x"):
            assert lock.exists()
        assert lock.exists()
    assert not lock.exists()


def test_library_outputs_follow_the_same_rules(tmp_path, city):
    """TraceSet.save and the other writers go through the same check."""
    ts = simulate(5, seed=1)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "data.csv").write_text("1,2\n")
    with pytest.raises(InputError, match="not a folder locsynth wrote"):
        ts.save(tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "data.csv").read_text() == "1,2\n"
    ts.save(city, overwrite=True)
    with pytest.raises(InputError, match="is an input"):
        check_output(city, overwrite=True, directory=True, inputs=[city])


def test_a_disk_error_anywhere_in_a_command_is_one_line(tmp_path, monkeypatch):
    """A read-only or full disk met outside an output's own writer (a benchmark's folder, a cache)
    is one line naming the file, exit 1; any other OSError is not hidden."""
    import locsynth.benchmark.runs as runs

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / "b"))

    monkeypatch.setattr(runs, "run_benchmark", read_only)
    res = run("benchmark", "--data", tmp_path, "--out", tmp_path / "b")
    assert res.exit_code == 1 and res.output.strip() == f"error: cannot write {tmp_path / 'b'}: Read-only file system"

    def other(*args, **kwargs):
        raise OSError(errno.EBADF, "bad file descriptor")

    monkeypatch.setattr(runs, "run_benchmark", other)
    res = run("benchmark", "--data", tmp_path, "--out", tmp_path / "b")
    assert res.exit_code == 1 and isinstance(res.exception, OSError)


def test_a_benchmark_on_a_read_only_folder_is_one_line(tmp_path, monkeypatch):
    from locsynth.benchmark.runs import _check_settings

    real_mkdir = type(tmp_path).mkdir

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(type(tmp_path), "mkdir", read_only)
    with pytest.raises(InputError, match="cannot write to .*b: Read-only file system"):
        _check_settings(tmp_path / "b", {})
    monkeypatch.setattr(type(tmp_path), "mkdir", real_mkdir)
