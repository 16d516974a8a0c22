"""``locsynth release``: a synthetic set into a release. Parsing and printing only; the work is in
locsynth.release."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import _claim, reports_errors, say
from .root import app


@app.command()
@reports_errors
def release(
    synthetic: Path = typer.Argument(..., help="Synthetic (or anonymized) TraceSet to release."),
    out: Path = typer.Option(..., "--out", "-o", help="Release directory to write."),
    pdtest: Optional[Path] = typer.Option(None, help="PD test output of this set: release only the traces that pass."),
    key: Optional[Path] = typer.Option(None, help="Also write the pseudonym -> source key here (kept apart, for "
                                                  "evaluation only)."),
    evaluation: Optional[Path] = typer.Option(None, help="An evaluation of this set: its attack results go on the "
                                                         "release card."),
    overwrite: bool = typer.Option(False, help="Replace OUT (and KEY) if they exist."),
):
    """Turn a synthetic set into a release: passing traces only, random pseudonyms, a release card."""
    from ..release.publish import release as make_release
    from ..data.traces import TraceSet

    _claim(out, overwrite=overwrite, inputs=[synthetic, pdtest, evaluation])
    card = make_release(TraceSet.load(synthetic), out, pdtest=pdtest, key=key, evaluation=evaluation,
                        overwrite=overwrite)
    pd_text = (f" that passed the (k={card['pd_test']['k']}, eta={card['pd_test']['eta']:g}) PD test"
               if card["pd_test"] else "")
    say(f"wrote {out}: {card['traces']} traces{pd_text}, {card['events']} events, under random pseudonyms; "
        f"card in {out}/RELEASE.md" + (f"; key in {key}" if key else ""))
    for line in card["ledger_summary"]:
        say(f"privacy: {line}")
