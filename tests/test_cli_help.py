"""Every command's ``--help``, compared with the snapshot in tests/snapshots/cli_help.txt.

A change to a command's options or help text is a change users see: it shows here as a diff of
the snapshot, made on purpose (``python tests/test_cli_help.py`` rewrites it) and reviewed in the
same commit. A move of the code that makes the commands must leave it as it is.
"""

from pathlib import Path

import typer
from typer.testing import CliRunner

from locsynth.cli import app

SNAPSHOT = Path(__file__).parent / "snapshots" / "cli_help.txt"
#: a fixed terminal, so that rich lays the help out the same everywhere
ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1", "TERM": "dumb"}


def commands(group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of every command and group under ``group`` (a click command: typer's own copy of
    click or click itself), the root's ``()`` first."""
    out = [path]
    if hasattr(group, "commands"):
        for name in sorted(group.commands):
            out += commands(group.commands[name], path + (name,))
    return out


def helps() -> str:
    runner = CliRunner()
    parts = []
    for path in commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env=ENV, prog_name="locsynth")
        assert result.exit_code == 0, (path, result.output)
        lines = [line.rstrip() for line in result.output.splitlines()]
        parts.append(f"=== locsynth {' '.join(path)}".rstrip() + "\n" + "\n".join(lines).strip("\n") + "\n")
    return "\n".join(parts)


def test_every_help_is_the_snapshot():
    now, kept = helps(), SNAPSHOT.read_text()
    assert now.count("=== locsynth") == kept.count("=== locsynth") >= 20
    assert now == kept, "a command's --help changed: rewrite tests/snapshots/cli_help.txt with " \
                        "`python tests/test_cli_help.py` if the change is meant"



def test_the_usual_habits_version_short_help_exit_codes_and_did_you_mean():
    """--version and -h as click's tools have them; a runtime error (bad input) exits 1 with one
    line, a usage error click's 2; a misspelled method is named with the closest valid one."""
    from importlib.metadata import version

    runner = CliRunner()
    res = runner.invoke(app, ["--version"], env=ENV)
    assert res.exit_code == 0 and res.output.strip() == f"locsynth {version('locsynth')}"
    assert runner.invoke(app, ["fit", "-h"], env=ENV).output == runner.invoke(app, ["fit", "--help"], env=ENV).output
    bad = runner.invoke(app, ["fit", "privtrce", "nowhere", "-o", "out"], env=ENV)
    assert bad.exit_code == 1 and "did you mean 'privtrace'?" in bad.output and "Traceback" not in bad.output
    assert runner.invoke(app, ["fit"], env=ENV).exit_code == 2                    # click's usage error
    fmt = runner.invoke(app, ["prepare", "nowhere", "-o", "out", "--format", "cab-trip"], env=ENV)
    assert fmt.exit_code == 1 and "did you mean 'cab-trips'?" in fmt.output


def test_a_misspelled_flavour_or_choice_names_the_closest_valid_one():
    import pytest

    from locsynth.core.errors import InputError
    from locsynth.core.validation import one_of
    from locsynth.metrics.standard import check_flavour

    with pytest.raises(InputError, match=r"got 'ldptrac' \(did you mean 'ldptrace'\?\)"):
        check_flavour("ldptrac")
    with pytest.raises(InputError, match=r"got 'zzz'$"):
        one_of("paper", "code")("zzz", "variant")

if __name__ == "__main__":
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(helps())
    print(f"wrote {SNAPSHOT}")
