"""report.html on the PF evaluation, and the comparison of several metrics.json."""

import base64
import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from locsynth import InputError
from locsynth.evaluation.evaluate import evaluate
from locsynth.data.discretize import read_pf_synthetic
from locsynth.evaluation.report import compare, compare_html, load_metrics, render_html, tradeoff_plot
from locsynth.evaluation.report.labels import format_value
from locsynth.metrics.figures import _grid_image, roc_png

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "embed", "source", "track", "wbr"}


class Page(HTMLParser):
    """Collects tags and their attributes, and fails on a tag closed out of order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.tags, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    assert page.stack == [], f"unclosed tags {page.stack}"
    return page


@pytest.fixture(scope="module")
def pf_synthetic(pf_sets, pf_dir):
    return read_pf_synthetic(pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv", pf_sets["train"])


@pytest.fixture(scope="module")
def pf_report(pf_sets, pf_synthetic):
    return evaluate(pf_sets["train"], pf_sets["test"], pf_synthetic)


@pytest.fixture(scope="module")
def pf_html(pf_report):
    return render_html(pf_report)


def test_page_parses_and_shows_every_metric(pf_report, pf_html):
    page = parse(pf_html)
    text = " ".join(page.text)
    assert [t for t, _ in page.tags].count("title") == 1
    for label in ("TP-TV", "TP-TV-Top50", "TM-EMD-Y", "TM-EMD-X", "TM-SWD", "VF-TV", "Re-identification rate",
                  "MIA advantage", "MIA accuracy", "Empirical epsilon"):
        assert label in text
    for key, entry in pf_report.metrics.items():
        for field, value in entry.items():
            assert format_value(value) in text, (key, field, value)
    assert "0.4274" in text and "0.0160" in text  # TP-TV and re-identification rate of PPMTF on PF
    assert "5,000 synthetic traces" in text and "500 real test traces" in text
    # the better of synthetic and training is highlighted: training for TP-TV, synthetic for reid
    cells = re.findall(r'<td class="num( best)?">([^<]*)</td>', pf_html)
    assert ("", "0.4274") in cells and (" best", "0.3855") in cells and (" best", "0.0160") in cells
    assert "Privacy: re-identification names the right training user for 1.6% of synthetic traces" in text


def test_page_names_the_standard_suites_flavour(pf_report, pf_html):
    assert pf_report.meta["standard"]["flavour"] == "adatrace"
    text = " ".join(parse(pf_html).text)
    assert "adatrace" in text and "AdaTrace's Evaluation.java reproduced, its slips included" in text
    assert "coordinates in degrees (x = longitude, y = latitude)" in text


def test_page_is_self_contained(pf_html):
    page = parse(pf_html)
    assert "http://" not in pf_html and "https://" not in pf_html and "//" not in re.sub(r"base64,[^\"]*", "", pf_html)
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    # population, transition EMDs, visit fractions, the two ROCs (likelihood ratio, trajectory distance), and
    # the Bayesian zone divergences against the paper's threshold
    assert len(images) == 6
    for attrs in images:
        assert attrs["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(attrs["src"].split(",", 1)[1]).startswith(PNG_SIGNATURE)
        assert attrs["alt"]
    for tag, attrs in page.tags:
        assert tag not in ("link", "script", "iframe", "object")
        for name in ("src", "href"):
            assert attrs.get(name) is None or attrs[name].startswith("data:"), (tag, attrs)
    assert len(pf_html) < 2_000_000


def test_page_without_attacks_has_no_privacy_plot(pf_sets, pf_synthetic):
    report = evaluate(pf_sets["train"], pf_sets["test"], pf_synthetic, attacks=())
    html = render_html(report, title="No <attacks> & co")
    page = parse(html)
    images = [attrs["alt"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 3 and not any("ROC" in alt for alt in images)
    assert "MIA advantage" not in html and "No attacks were run" in html
    assert "<title>No &lt;attacks&gt; &amp; co</title>" in html


def test_heatmap_keeps_the_south_at_the_bottom(pf_report):
    space = pf_report.details["space"]
    p = np.zeros(space["rows"] * space["cols"])
    p[0] = 1.0  # row 0, column 0: the south-west cell
    image, (lon0, lon1, lat0, lat1), origin = _grid_image(p, space)
    assert origin == "lower" and image[0, 0] == 1.0  # imshow draws image row 0 at the bottom
    assert lat0 < lat1 and lon0 < lon1
    assert lat0 < space["lat"][0] < space["lat"][-1] < lat1


def test_plots_are_deterministic(pf_report):
    assert roc_png(pf_report.details["mia"]) == roc_png(pf_report.details["mia"])


def test_format_value():
    assert format_value(None) == "—" and format_value(float("nan")) == "—" and format_value(math.inf) == "∞"
    assert format_value(0.42736) == "0.4274" and format_value(0) == "0.0000"


def metrics(tp_tv, reid, training=(0.4, 0.99), uniform=(0.5, 0.002)):
    return {"tp_tv": {"synthetic": tp_tv, "training": training[0], "uniform": uniform[0]},
            "reid_rate": {"synthetic": reid, "training": training[1], "uniform": uniform[1]},
            "_meta": {"train": {"users": 10}}}


def test_compare_table():
    table = compare({"PPMTF": metrics(0.43, 0.016), "SGLT": {**metrics(0.45, None), "extra": {"synthetic": 2.0}}})
    assert list(table.index) == ["PPMTF", "SGLT", "Training", "Uniform"]
    assert list(table.columns) == ["tp_tv", "reid_rate", "extra"]
    assert table.index.name == "set"
    expected = pd.DataFrame({"tp_tv": [0.43, 0.45, 0.4, 0.5], "reid_rate": [0.016, np.nan, 0.99, 0.002],
                             "extra": [np.nan, 2.0, np.nan, np.nan]}, index=table.index)
    pd.testing.assert_frame_equal(table, expected)


def test_compare_refuses_bad_input_and_warns_on_other_baselines():
    with pytest.raises(InputError, match="at least one"):
        compare({})
    with pytest.raises(InputError, match="'Training' is reserved"):
        compare({"Training": metrics(0.4, 0.9)})
    with pytest.raises(InputError, match="not a locsynth metrics.json"):
        compare({"a": {"tp_tv": 0.4}})
    with pytest.warns(UserWarning, match="baselines of 'b' differ from those of 'a' in tp_tv"):
        compare({"a": metrics(0.4, 0.1), "b": metrics(0.4, 0.1, training=(0.3, 0.99))})


def test_tradeoff_plot_and_page(tmp_path):
    table = compare({"PPMTF <a=200>": metrics(0.43, 0.016), "SGLT": metrics(0.45, None)})
    png = tradeoff_plot(table, path=tmp_path / "tradeoff.png")
    assert png.startswith(PNG_SIGNATURE) and (tmp_path / "tradeoff.png").read_bytes() == png
    with pytest.raises(InputError, match="no privacy metric 'mia_advantage'.*expected one of tp_tv, reid_rate"):
        tradeoff_plot(table, privacy="mia_advantage")
    html = compare_html(table, png)
    page = parse(html)
    assert "PPMTF &lt;a=200&gt;" in html and "http" not in html
    assert [attrs["src"][:22] for tag, attrs in page.tags if tag == "img"] == ["data:image/png;base64,"]


def test_load_metrics(pf_report, tmp_path):
    pf_report.to_json(tmp_path / "run" / "metrics.json")
    loaded = load_metrics(tmp_path / "run")
    assert loaded["tp_tv"] == pf_report.metrics["tp_tv"] and "_meta" in loaded
    assert load_metrics(tmp_path / "run" / "metrics.json") == loaded
    with pytest.raises(InputError, match="no metrics.json in the directory"):
        load_metrics(tmp_path)
    with pytest.raises(InputError, match="missing.json does not exist"):
        load_metrics(tmp_path / "missing.json")
    (tmp_path / "damaged.json").write_text('{"tp_tv": {"synthetic": 0.4')
    with pytest.raises(InputError, match="damaged.json is damaged: not valid JSON"):
        load_metrics(tmp_path / "damaged.json")
    (tmp_path / "other.json").write_text(json.dumps({"name": "x"}))
    with pytest.raises(InputError, match="other.json is not a locsynth metrics.json"):
        load_metrics(tmp_path / "other.json")


def test_other_metrics_have_names_and_their_own_direction():
    from locsynth.evaluation.evaluate import Report

    metrics = {"sglt_top10_coverage": {"synthetic": 0.3, "training": 0.8, "uniform": None},
               "sglt_visits_kl": {"synthetic": 0.5, "training": 0.1, "uniform": None}}
    page = render_html(Report(metrics, {}, {"privacy_tests": {"privacy_test": True, "passed": 9, "requested": 10,
                                                              "tries": 12, "pass_rate": 0.75, "seeds_short": 1},
                                            "params": {"delta_i": 0, "delta_s": 0.1, "k": 1, "delta_d": 0.1}}))
    assert "Top-10 coverage (c)" in page and "Visits KL (a)" in page
    # coverage: higher is better, so the training's 0.8 is highlighted; KL: the lower 0.1
    assert re.search(r'class="[^"]*best[^"]*"[^>]*>\s*<?b?>?0\.8000', page) and re.search(
        r'class="[^"]*best[^"]*"[^>]*>\s*<?b?>?0\.1000', page)
    assert "9 of 10 requested fakes passed" in page and "1 seeds ran out of tries" in page


# -- trips (paper 004 §8.4-8.5) ----------------------------------------------------------------------

TRIPS_TEST = ([[0, 1, 2], [1, 2], [0, 1], [3, 2, 1, 0], [1, 2, 3]], [8, 8, 9, 9, 10])
TRIPS_TRAIN = ([[0, 1], [1, 2, 1], [0, 1, 2], [2, 1], [1, 2, 3]], [8, 9, 9, 10, 10])


@pytest.fixture(scope="module")
def trip_reports():
    """The DP-trip-like set (with hours) and an NGRAM-like one (hour -1), against the same trips."""
    from helpers import trip_set

    train, test = trip_set(*TRIPS_TRAIN), trip_set(*TRIPS_TEST)
    hourly = trip_set([[0, 1, 2], [0, 1, 2, 3], [1, 2], [2, 3]], [8, 9, 9, 12])
    timeless = trip_set([[0, 1], [1, 2, 3], [3, 2]], [-1, -1, -1])
    return {"dptrip": evaluate(train, test, hourly), "ngram": evaluate(train, test, timeless)}


def test_trip_report_shows_the_papers_plots_and_what_it_skipped(trip_reports):
    html = render_html(trip_reports["dptrip"])
    page = parse(html)
    text = " ".join(page.text)
    for heading in ("Trip-length divergence per hour (paper 004 Figure 3)",
                    "Source-destination EMD per hour (paper 004 Figure 4)", "Frequent patterns (paper 004 Tables 2-3)",
                    "Trips (paper 004 Table 1)", "Not computed"):
        assert heading in text
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    # paper 004's two, the distance MIA's ROC and the Bayesian attack's divergences with the paper's threshold
    assert len(images) == 5 and all(base64.b64decode(src.split(",", 1)[1]).startswith(PNG_SIGNATURE)
                                    for src in images)
    assert "Jensen-Shannon divergence in bits" in text and "TP-TV, TP-TV-Top50" in text
    assert "Distance MIA advantage" in text and "the paper's threshold 0.1" in text
    assert "No attacks were run" not in text
    # the set without hours: one dashed value, and the caption says so
    assert "its method released no time: time_share=0" in render_html(trip_reports["ngram"])


def test_trip_comparison_puts_the_sets_side_by_side(trip_reports, tmp_path):
    from locsynth.evaluation.report import comparison

    for name, report in trip_reports.items():
        report.save(tmp_path / name)
    loaded = {name: load_metrics(tmp_path / name) for name in trip_reports}
    table, files = comparison(loaded)
    # the uniform row holds the attacks' chance values only (no uniform set of trips is made)
    assert list(table.index) == ["dptrip", "ngram", "Training", "Uniform"]
    assert table.loc["Uniform"].dropna().index.tolist() == ["trip_start_hour_jsd", "trip_duration_jsd", "trip_speed_jsd",
                                                             "realism_far_cell", "realism_far_km", "dmia_advantage", "dmia_auc", "dmia_tpr_at_fpr_0001",
                                                             "dmia_tpr_at_fpr_001", "dmia_epsilon_lower_bound",
                                                             "copy_score", "near_copy_score", "sniff_advantage",
                                                             "bayes_gain", "outlier_advantage"]
    assert list(files) == ["tradeoff.png", "trip_length_jsd.png", "trip_sd_emd.png", "compare.html"]
    assert all(files[f].startswith(PNG_SIGNATURE) for f in ("trip_length_jsd.png", "trip_sd_emd.png"))
    page = parse(files["compare.html"])
    assert sum(tag == "img" for tag, _ in page.tags) == 3
    # top-K precision: higher is better, so the larger value is highlighted
    best = table.loc[["dptrip", "ngram"], "trip_top10_precision"].max()
    assert best > table.loc[["dptrip", "ngram"], "trip_top10_precision"].min()
    cells = re.findall(r'<td class="best">([^<]+)</td>', files["compare.html"])
    assert format_value(best) in cells and "Top-10 patterns &uarr;" in files["compare.html"]
    assert math.isnan(table.loc["ngram", "trip_length_jsd_hourly"])


def test_baselines_are_grouped_apart_and_never_marked_best():
    """Rows group by kind (synthesizers, anonymizers, baselines); 'none' publishes the real traces
    and has the best TP-TV, yet the best mark goes to the best method that protects (#25)."""
    table = compare({"none": {**metrics(0.30, 1.0), "_meta": {"method": "none"}},
                     "tpm ε=1": {**metrics(0.55, None), "_meta": {"method": "tpm"}},
                     "krr ε=1": {**metrics(0.50, 0.01), "_meta": {"method": "krr"}},
                     "ppmtf": {**metrics(0.45, 0.02), "_meta": {"method": "ppmtf"}}})
    assert list(table.index) == ["tpm ε=1", "ppmtf", "krr ε=1", "none", "Training", "Uniform"]
    assert table.attrs["kinds"]["none"] == "baseline" and table.attrs["kinds"]["krr ε=1"] == "anonymizer"
    page = compare_html(table)
    best = re.findall(r'<td class="best">([^<]*)</td>', page)
    assert best == ["0.4500", "0.0100"]              # ppmtf's TP-TV and krr's re-identification rate
    assert page.index("Synthesizers") < page.index("Anonymizers") < page.index("Baselines")
    png = tradeoff_plot(table)
    assert png.startswith(PNG_SIGNATURE)


def test_labels_of_coincident_points_are_merged_and_placed_apart():
    """Sets at one point get one label; labels of close points do not overlap."""
    import matplotlib

    from locsynth.evaluation.report import plots

    points = [("training", 1.0, 0.34, True), ("none", 1.0, 0.34, True), ("cheat", 1.0, 0.34, True),
              ("krr", 0.006, 0.579, False), ("uniform", 0.004, 0.586, True), ("sglt", 0.0, 0.555, False)]
    fig = plots.new_figure(5.2, 4.0)
    ax = fig.subplots()
    for _, x, y, _ in points:
        ax.scatter([x], [y])
    ax.set_xlim(-0.1, 1.2)
    ax.set_ylim(0, 1)
    fig.canvas.draw()
    plots._label_points(ax, points)
    texts = [t for t in ax.texts]
    assert sorted(t.get_text() for t in texts) == ["krr", "sglt", "training = none = cheat", "uniform"]
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    inside, dots = ax.get_window_extent(), {name: ax.transData.transform((x, y)) for name, x, y, _ in points}
    for text, box in zip(texts, boxes):
        names = text.get_text().split(" = ")
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, names
        assert not [other for other, dot in dots.items() if other not in names and box.contains(*dot)], names
    colours = {t.get_text(): matplotlib.colors.to_hex(t.get_color()) for t in texts}   # baselines in grey
    assert colours == {"training = none = cheat": "#666666", "uniform": "#666666", "krr": "#111111",
                       "sglt": "#111111"}


def test_a_metric_that_cannot_tell_real_from_random_is_named_and_left_out_of_the_summary():
    """TP-TV on sparse check-ins read 0.951 for the training set and 0.954 for uniform: such a
    metric is named as uninformative, and the utility summary averages the others only."""
    from locsynth.evaluation.report.html import summary_sentences, uninformative

    metrics = {"tp_tv": {"synthetic": 0.2, "training": 0.951, "uniform": 0.954},
               "tm_emd_x": {"synthetic": 3.25, "training": 0.0, "uniform": 6.5}}
    assert uninformative(metrics) == ["tp_tv"]
    text = summary_sentences(metrics)
    assert "go on average 50% of the way" in text[0]                   # tm_emd_x alone; tp_tv would pull it up
    assert text[1].startswith("Uninformative here: tp_tv reads 0.951")
    metrics["tp_tv"]["uniform"] = 0.8
    assert uninformative(metrics) == []


def test_the_trip_summary_weighs_the_distance_mia_bound_against_the_claimed_epsilon():
    """Issue 48: a positive bound is compared with the release's claimed epsilon, with its caveat and its
    ceiling at the attack's numbers of targets; the copy check's flag is in words."""
    from locsynth.evaluation.report.html import trip_privacy

    metrics = {"dmia_advantage": {"synthetic": 0.01, "training": 0.6}, "dmia_tpr_at_fpr_0001": {"synthetic": 0.004},
               "dmia_epsilon_lower_bound": {"synthetic": 2.0}, "copy_p_value": {"synthetic": 1e-9},
               "copy_score": {"synthetic": 0.5}}
    above = trip_privacy(metrics, claimed=1.0, ceiling=7.8)
    assert "above the release's claimed epsilon of 1 per person" in above and "caveat" in above
    assert "no bound can exceed 7.8" in above and "the copy check flags the release" in above
    assert "not 2.00-differentially private" not in above
    assert "within the release's claimed epsilon of 4" in trip_privacy(metrics, claimed=4.0, ceiling=7.8)
    assert "claims no epsilon" in trip_privacy(metrics, claimed=None, ceiling=7.8)
    quiet = trip_privacy({**metrics, "dmia_epsilon_lower_bound": {"synthetic": 0.0}, "copy_p_value": {"synthetic": 0.4}},
                         claimed=1.0, ceiling=7.8)
    assert "no significant evidence" in quiet and "finds no more synthetic trips near training trips" in quiet
