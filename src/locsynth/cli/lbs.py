"""``locsynth lbs``: the LBS fake-query scenario (paper 002 §VII). Parsing and printing only; the work
is in locsynth.lbs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import _claim, as_flags, progress_bar, reports_errors, say
from .root import app


@app.command()
@reports_errors
def lbs(
    train: Optional[Path] = typer.Option(None, help="Training TraceSet to fit the SGLT model on (unless --model)."),
    test: Path = typer.Option(..., help="Test TraceSet: the users who query the location-based service."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for lbs.csv, lbs.png and lbs.html."),
    fakes: str = typer.Option("1,5,10", help="Numbers m of fake traces sent along each query, comma-separated."),
    model: Optional[Path] = typer.Option(None, "--model", help="A fitted SGLT model directory instead of fitting one "
                                         "on --train."),
    clusters: Optional[int] = typer.Option(None, help="Semantic classes of the SGLT model fitted on --train "
                                           "(default: SGLT's default)."),
    repeats: int = typer.Option(5, help="Repetitions averaged (paper 002: 20)."),
    pool: int = typer.Option(10, help="SGLT fakes per training user in the pool the users draw theirs from."),
    adversary: str = typer.Option("aggregate", help="What the adversary knows: aggregate (the aggregate mobility "
                                  "model, as in the paper) or profile (also the user's own chain)."),
    query_minutes: float = typer.Option(40.0, help="Mean time between two queries of a user, in minutes."),
    temperature: Optional[float] = typer.Option(None, help="SGLT fakes are drawn with weights exp(loglik / "
                                                "temperature); default: the instants of a day (1: untempered)."),
    seed: int = typer.Option(0, help="Random seed."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Fake traces for location-based services: privacy against utility loss of SGLT fakes and four
    baselines (paper 002 §VII, Figure 6)."""
    from ..lbs.scenario import run_lbs
    from ..lbs.page import lbs_html, lbs_png
    from ..core.files import atomic_output

    _claim(out, overwrite=overwrite, inputs=[test, train, model])
    with progress_bar() as bar:
        task = bar.add_task("LBS", total=None)
        table, what, notes = run_lbs(test, train=train, model=model, clusters=clusters, fakes=fakes,
                                     repeats=repeats, pool=pool, adversary=adversary, query_minutes=query_minutes,
                                     temperature=temperature, seed=seed,
                                     progress=lambda done, total, status="": bar.update(
                                         task, completed=done, total=total, description=status or None))
    for note in notes:
        say("note: " + as_flags(note))
    png = lbs_png(table)
    with atomic_output(out, overwrite, directory=True) as tmp:
        table.to_csv(tmp / "lbs.csv", index=False)
        (tmp / "lbs.png").write_bytes(png)
        (tmp / "lbs.html").write_text(lbs_html(table, png, what))
    say(what)
    say(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    say(f"wrote {out}/lbs.csv, lbs.png and lbs.html")
