"""What a notebook shows (locsynth/core/display.py): short reprs instead of dataclass dumps, HTML tables
that state the sizes, space, time axis and ledger, and a report as a DataFrame."""

import numpy as np
import pandas as pd

import locsynth
from locsynth.testing import check_data


def test_a_traceset_a_space_and_a_model_show_what_they_are_not_their_arrays():
    ts = check_data()
    text = repr(ts)
    assert text == f"TraceSet({ts.n_users} users, {ts.n_traces} traces, {ts.n_events} events, grid 20x20, UTC)"
    assert len(repr(ts.space)) < 120 and "400 locations" in repr(ts.space)
    html = ts._repr_html_()
    assert "<table>" in html and f"<td style='text-align:left'>{ts.n_events}</td>" in html and "time axis" in html
    model = locsynth.TPM(epsilon=1.0).fit(ts)
    shown = model._repr_html_()
    assert "epsilon" in shown and "per person" in shown and "fitted" in shown
    assert "fitted</th><td style='text-align:left'>no" in locsynth.TPM()._repr_html_()
    syn = model.sample(seed=1)
    assert repr(syn).endswith("made by tpm)") and "made by" in syn._repr_html_()


def test_a_traceset_shows_a_small_map_of_its_visits():
    import re

    ts = check_data()
    svg = ts._repr_html_().split("<svg", 1)[1]
    visits = np.bincount(ts.loc[ts.loc >= 0], minlength=ts.space.n_locations)
    opacity = [float(v) for v in re.findall(r"fill-opacity='([0-9.]+)'", svg)]
    assert len(opacity) == np.count_nonzero(visits)
    assert opacity[0] == 1.0 and min(opacity) >= 0.15  # the busiest location first, at full shade
    assert opacity == sorted(opacity, reverse=True)


def test_a_report_is_a_frame_of_its_metrics():
    ts = check_data()
    syn = locsynth.TPM(epsilon=1.0).fit(ts).sample(seed=1)
    report = locsynth.evaluate(ts, ts, syn, attacks="none")
    frame = report.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "metric"
    for key, values in report.metrics.items():
        for column, value in values.items():
            got = frame.loc[key, column]
            assert (value is None and pd.isna(got)) or np.isclose(got, value), (key, column)
    assert repr(report).startswith(f"Report({len(report.metrics)} metrics of tpm")
    assert "locsynth evaluation: tpm" in report._repr_html_() and "tp_tv" in report._repr_html_()


def test_progress_true_shows_a_bar_and_none_stays_silent(capsys):
    """fit, sample and evaluate take progress=True for a tqdm.auto bar (text outside Jupyter, on
    stderr); the default prints nothing."""
    ts = check_data()
    model = locsynth.PPMTF(iterations=3, rho=20).fit(ts, progress=True)
    syn = model.sample(progress=True)
    locsynth.evaluate(ts, ts, syn, attacks="none", progress=True)
    err = capsys.readouterr().err
    assert "fit ppmtf" in err and "3/3" in err and "sample ppmtf" in err and "evaluate" in err
    locsynth.PPMTF(iterations=3, rho=20).fit(ts).sample()
    assert capsys.readouterr().err == ""


def test_a_set_draws_as_a_map_of_its_traces():
    import matplotlib

    matplotlib.use("Agg")
    ts = check_data()
    ax = ts.plot(n=10)
    assert len(ax.lines) == 10 and len(ax.collections) == 1 and ax.get_title() == f"10 of {ts.n_traces} traces"
    lo, hi = ax.get_xlim()
    assert lo <= ts.space.lon.min() and hi >= ts.space.lon.max()
    assert len(ts.plot(n=5, density=False).collections) == 0
