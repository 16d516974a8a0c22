"""``locsynth contest ...``: the PWS Cup workflow for a judge and the single steps for a team
(paper 003 §3.4). Parsing and printing only; the work is in locsynth.contest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import (_claim, as_flags, declared_command, on_bar, on_spinner, progress_bar, reports_errors,
                     say, spinner)

contest_app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                          help="The PWS Cup anonymization contest: init, anonymize, pseudonymize, attack, score, analyze.")

REGIONS = typer.Option(..., "--regions", help="info_region.csv (the grid and its hospitals).")
TIMES = typer.Option(None, "--times", help="info_time.csv (default: the Osaka table, 20 instants a day from 8:00).")
SEED = typer.Option(0, help="Seed of every non-DP random choice (DP noise is never seeded).")
EVENT_SHARE = typer.Option(1.0, "--event-share", help="Share of events VisitProb scores (1: the paper's full likelihood; "
                           "0.1: the organisers' kit, I2-VisitProb.py). HomeProb always scores every event of 8:00-8:59, "
                           "as the kit does.")
KIT_REGIONS_OPTION = typer.Option(None, "--kit-regions", help="Regions of a generalized event VisitProb and HomeProb "
                                  "score at most, drawn at random (default: all, the paper's likelihood; 10: the "
                                  "organisers' kit). The kit is --event-share 0.1 --kit-regions 10.")
OVERWRITE = typer.Option(False, help="Replace outputs that exist.")


def _frame(regions: Path, times: Optional[Path]):
    """The contest's time table, and a reader of trace files on its grid and time table."""
    from ..contest.files import default_times, read_regions, read_times, read_traces

    grid, table = read_regions(regions), (read_times(times) if times else default_times())
    return table, lambda path: read_traces(path, grid, table)


@contest_app.command()
@reports_errors
def init(
    train: Path = typer.Argument(..., help="Training TraceSet on a 32x32 grid, 8:00-18:00 every 30 min (locsynth "
                                 "prepare), or a PPMTF+ model from locsynth fit ppmtf-plus."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write: info_region.csv, info_time.csv, "
                             "reftraces_teamNNN.csv and orgtraces_teamNNN.csv per team, contest.json."),
    teams: int = typer.Option(2, help="Number of teams, each with its own virtual users."),
    users: int = typer.Option(2000, help="Virtual users m per team (paper 003: 2000)."),
    reference_days: int = typer.Option(2, help="Reference days, time ids 1..20 x days (the paper: 20, the Osaka files: 2)."),
    original_days: int = typer.Option(2, help="Original days following them (the paper: 20, the Osaka files: 2)."),
    iterations: Optional[int] = typer.Option(None, help="PPMTF+ Gibbs sweeps (when TRAIN is a TraceSet; default: "
                                             "PPMTF+'s, 100)."),
    rank: Optional[int] = typer.Option(None, help="PPMTF+ feature dimension z (default: PPMTF+'s, 16)."),
    alpha: Optional[float] = typer.Option(None, help="PPMTF+ precision alpha (default: PPMTF+'s, 200)."),
    home_boost: float = typer.Option(20.0, help="Added to a virtual user's home visit count in the first and last "
                                     "slots (Appendix D)."),
    hospitals: Optional[Path] = typer.Option(None, "--hospitals", help="An info_region.csv of the same grid whose "
                                             "hospitals to use (default: the grid's 'hospital' cells, else none)."),
    seed: int = typer.Option(0, help="Seed of training and of every team's virtual users (team k: derived from it)."),
    overwrite: bool = OVERWRITE,
):
    """Make a contest (paper 003 §3.3, Appendices A and D): PPMTF+ with homes, m virtual users per
    team, reference days then original days, in the organisers' file formats."""
    from ..contest import teamdata

    teamdata.check_counts(teams=teams, users=users, reference_days=reference_days, original_days=original_days)
    _claim(out, overwrite=overwrite, inputs=[train])
    if (train / "model.json").is_file():
        model = teamdata.load_model(train)
        say(f"loaded {train}: {model.name} trained on {model.training_.get('users', '?')} users")
    else:
        ts = teamdata.load_training(train)
        params = {k: v for k, v in (("rank", rank), ("iterations", iterations), ("alpha", alpha)) if v is not None}
        with progress_bar() as bar:
            task = bar.add_task("fitting PPMTF+", total=None)
            model = teamdata.fit_model(ts, seed=seed, **params, progress=on_bar(bar, task, "fitting PPMTF+"))
        say(f"trained PPMTF+ on {ts.n_traces} users of {train} ({model.iterations} sweeps)")
    with spinner("contest init") as status:
        contest = teamdata.make_contest(model, teams=teams, users=users, reference_days=reference_days,
                                        original_days=original_days, seed=seed, home_boost=home_boost,
                                        hospitals_from=hospitals,
                                        progress=on_spinner(status, "sampling "))
    record = teamdata.write_contest(contest, out, overwrite=overwrite, meta={"seed": seed, "home_boost": home_boost})
    for line in teamdata.describe(contest, record):
        say(as_flags(line))
    say(f"wrote {out}")


@contest_app.command()
@reports_errors
def run(
    org: Path = typer.Option(..., "--org", help="Original traces (orgtraces_*.csv)."),
    ref: Path = typer.Option(..., "--ref", help="Reference traces (reftraces_*.csv), the attackers' knowledge."),
    regions: Path = REGIONS,
    anonymizers: Optional[str] = typer.Option(None, "--anonymizers", help="';'-separated anonymizer specs: the contest's "
                                    "forms (contest/run.py FORMS: NAME:VALUE,... in order) or NAME:PARAM=VALUE,...; "
                                    "default: every form at the contest's values."),
    seed: int = SEED,
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write: results.csv, report.html, files/."),
    times: Optional[Path] = TIMES,
    event_share: float = EVENT_SHARE,
    kit_regions: Optional[int] = KIT_REGIONS_OPTION,
    overwrite: bool = OVERWRITE,
):
    """Run every anonymizer, pseudonymize, run every attack, score: DIR/results.csv, the §5.5 analyses
    (DIR/analyses.csv: POI accuracy, TP-TV-Top50, TM-EMD) and a report."""
    from ..contest import run as contest
    from ..contest.analyses import analyses

    table, read = _frame(regions, times)
    specs = contest.parse_anonymizers(anonymizers or contest.DEFAULT_ANONYMIZERS)
    _claim(out, overwrite=overwrite, inputs=[org, ref, regions, times])
    original, reference = read(org), read(ref)
    with spinner("contest run") as status:
        entries = contest.run(original, reference, specs, seed=seed, event_share=event_share,
                              region_cap=kit_regions, progress=on_spinner(status, "anonymizer "))
        on_spinner(status)(0, None, "the §5.5 analyses")
        analysis = analyses(original, [(e.label, e.anonymized) for e in entries], reference=reference, seed=seed)
    lead = contest.lead(original, reference, org.name, ref.name, seed=seed, event_share=event_share,
                        region_cap=kit_regions)
    settings = {"seed": seed, "anonymizers": [label for label, _ in specs], "event_share": event_share,
                "kit_regions": kit_regions}
    result = contest.write_run(entries, out, times=table, overwrite=overwrite, lead=lead, analysis=analysis,
                               settings=settings)
    for line in contest.describe(result, analysis):
        say(line)
    say(f"wrote {out / 'results.csv'}, {out / 'analyses.csv'} and {out / 'report.html'}")


@contest_app.command()
@reports_errors
def anonymize(
    spec: str = typer.Argument(..., help="An anonymizer spec: a contest form (NAME:VALUE,... in order) or "
                               "NAME:PARAM=VALUE,... (contest/run.py FORMS)."),
    org: Path = typer.Option(..., "--org", help="Original traces."),
    regions: Path = REGIONS,
    out: Path = typer.Option(..., "--out", "-o", help="Anonymized trace file to write (anotraces_*.csv)."),
    seed: int = SEED,
    times: Optional[Path] = TIMES,
    overwrite: bool = OVERWRITE,
):
    """A team's step: obfuscate the original traces; prints the utility score it will get."""
    from ..contest.files import write_traces
    from ..contest.run import parse_anonymizer
    from ..contest.scores import S_REQ, utility

    table, read = _frame(regions, times)
    anonymizer = parse_anonymizer(spec)
    _claim(out, overwrite=overwrite, inputs=[org, regions, times], directory=False)
    original = read(org)
    result = anonymizer.transform(original, seed=seed)
    write_traces(result, out, table, overwrite=overwrite)
    s_u = utility(original, result)
    say(f"utility {s_u:.4f} ({'valid' if s_u >= S_REQ else 'invalid'}: s_req = {S_REQ}); wrote {out}")


@contest_app.command()
@reports_errors
def pseudonymize(
    anonymized: Path = typer.Argument(..., help="Anonymized trace file."),
    regions: Path = REGIONS,
    out: Path = typer.Option(..., "--out", "-o", help="Published trace file (pubtraces_*.csv)."),
    table: Path = typer.Option(..., "--table", help="Secret ID table to write (ptable_*.csv)."),
    seed: int = SEED,
    times: Optional[Path] = TIMES,
    overwrite: bool = OVERWRITE,
):
    """The judge's step: shuffle the traces and give them pseudonyms; the ID table stays secret."""
    from ..contest.files import write_id_table, write_traces
    from ..contest.pseudonymize import pseudonymize as shuffle

    tt, read = _frame(regions, times)
    _claim(out, table, overwrite=overwrite, inputs=[anonymized, regions, times], directory=False)
    published, ids = shuffle(read(anonymized), seed=seed)
    write_traces(published, out, tt, id_column="pse_id", overwrite=overwrite)
    write_id_table(ids, table, overwrite=overwrite)
    say(f"wrote {out} ({published.n_traces} pseudonyms {ids['pse_id'].min()}..{ids['pse_id'].max()}) and {table}")


def _contest_attacks_help() -> str:
    from ..contest.attacks import ATTACKS

    return "The attack: " + ", ".join(ATTACKS) + "."


@contest_app.command(cls=declared_command(helps={"name": _contest_attacks_help}))
@reports_errors
def attack(
    name: str = typer.Argument(..., help="The attack (the list: locsynth contest attack --help)."),
    ref: Path = typer.Option(..., "--ref", help="Reference traces."),
    pub: Path = typer.Option(..., "--pub", help="Published (pseudonymized) traces."),
    regions: Path = REGIONS,
    table_out: Path = typer.Option(..., "--table-out", help="Inferred ID table to write (pse_id,user_id)."),
    traces_out: Path = typer.Option(..., "--traces-out", help="Inferred traces to write (user_id,time_id,reg_id)."),
    seed: int = SEED,
    times: Optional[Path] = TIMES,
    event_share: float = EVENT_SHARE,
    kit_regions: Optional[int] = KIT_REGIONS_OPTION,
    overwrite: bool = OVERWRITE,
):
    """An attacker's step: re-identification and trace inference against published traces."""
    from ..contest.attacks import attack as run_attack
    from ..contest.files import write_id_table, write_traces
    from ..contest.run import attack_options

    tt, read = _frame(regions, times)
    _claim(table_out, traces_out, overwrite=overwrite, inputs=[ref, pub, regions, times], directory=False)
    result = run_attack(name, read(ref), read(pub), seed=seed,
                        **attack_options(name, event_share, kit_regions))
    write_id_table(result.table, table_out, overwrite=overwrite)
    write_traces(result.traces, traces_out, tt, overwrite=overwrite)
    say(f"wrote {table_out} and {traces_out}")


@contest_app.command()
@reports_errors
def score(
    org: Path = typer.Option(..., "--org", help="Original traces."),
    regions: Path = REGIONS,
    anonymized: Optional[Path] = typer.Option(None, "--anonymized", help="Anonymized traces: the utility score."),
    table: Optional[Path] = typer.Option(None, "--table", help="Secret ID table (with --inferred-table)."),
    inferred_table: Optional[Path] = typer.Option(None, "--inferred-table", help="An attacker's ID table: s_R."),
    inferred_traces: Optional[Path] = typer.Option(None, "--inferred-traces", help="An attacker's traces: s_T."),
    times: Optional[Path] = TIMES,
):
    """The judge's scores: utility s_U, re-identification privacy s_R, trace-inference privacy s_T."""
    from ..contest import scores
    from ..contest.files import read_id_table
    from ..core.errors import InputError

    _, read = _frame(regions, times)
    original = read(org)
    if anonymized is None and inferred_table is None and inferred_traces is None:
        raise InputError("nothing to score: give --anonymized, --inferred-table (with --table) or --inferred-traces")
    if anonymized is not None:
        s_u = scores.utility(original, read(anonymized))
        say(f"utility {s_u:.6f} ({'valid' if s_u >= scores.S_REQ else 'invalid'})")
    if inferred_table is not None:
        if table is None:
            raise InputError("--inferred-table needs the secret --table")
        say(f"reidentification_privacy {scores.reidentification(read_id_table(table), read_id_table(inferred_table)):.6f}")
    if inferred_traces is not None:
        say(f"trace_inference_privacy {scores.trace_inference(original, read(inferred_traces)):.6f}")


@contest_app.command()
@reports_errors
def analyze(
    org: Path = typer.Option(..., "--org", help="Original traces."),
    anonymized: list[Path] = typer.Option(..., "--anonymized", help="Anonymized traces (repeat for several)."),
    regions: Path = REGIONS,
    ref: Optional[Path] = typer.Option(None, "--ref", help="Reference traces: adds the (reference) baseline row."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="CSV to write (the columns of analyses.csv)."),
    seed: int = SEED,
    times: Optional[Path] = TIMES,
    overwrite: bool = OVERWRITE,
):
    """Paper 003 §5.5: POI accuracy, TP-TV-Top50 and TM-EMD of anonymized traces (Figure 13's baselines too)."""
    from ..contest.analyses import analyses, describe, write_analyses

    _, read = _frame(regions, times)
    _claim(out, overwrite=overwrite, inputs=[org, *anonymized, regions, ref, times], directory=False)
    original = read(org)
    releases = [(p.name, read(p)) for p in anonymized]
    reference = read(ref) if ref is not None else None
    with spinner("§5.5 analyses"):
        table = analyses(original, releases, reference=reference, seed=seed)
    for line in describe(table):
        say(line)
    if out is not None:
        write_analyses(table, out, overwrite=overwrite)
        say(f"wrote {out}")


@contest_app.command()
@reports_errors
def leaderboard(
    teams: Path = typer.Option(..., "--teams", help="CSV: team,org,ref,anonymizer,attack (anonymizer: a spec or an anonymized .csv)."),
    regions: Path = REGIONS,
    seed: int = SEED,
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write: leaderboard.csv and pairs.csv."),
    times: Optional[Path] = TIMES,
    event_share: float = EVENT_SHARE,
    kit_regions: Optional[int] = KIT_REGIONS_OPTION,
    overwrite: bool = OVERWRITE,
):
    """Every team's anonymized data against every other team's attack; standings by trace-inference privacy."""
    from ..contest import leaderboard as board

    _, read = _frame(regions, times)
    roster = board.read_roster(teams)
    _claim(out, overwrite=overwrite, inputs=[teams, regions, times])
    with spinner("leaderboard") as status:
        pairs, standings = board.leaderboard(board.roster_teams(roster, teams.parent, read), seed=seed,
                                             event_share=event_share, region_cap=kit_regions,
                                             progress=on_spinner(status, "team "))
    board.write_leaderboard(pairs, standings, out, overwrite=overwrite,
                            settings={"seed": seed, "event_share": event_share, "kit_regions": kit_regions})
    for line in board.describe(standings):
        say(line)
    say(f"wrote {out / 'leaderboard.csv'} and {out / 'pairs.csv'}")
