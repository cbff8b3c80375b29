"""A route is one module plus one registry entry: a fake route registered here, at test time,
appears in every place that names routes, because each of them reads the registry.

The fake's `measure` (this module's, found through its registration) times float32 against
autocast again, as eager does, under the name "fake" and the colour #123456. A consumer that
went back to a list of its own would miss the fake, and its assertion here fails.
"""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from jsonschema import Draft202012Validator
from PySide6.QtWidgets import QCheckBox, QTableWidget

from autocast_explorer.cli import build_parser
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.config_schema import config_properties
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import result_schema
from autocast_explorer.core.experiment.route_kinds import (
    RouteKind,
    register,
    route_kinds,
    route_names,
    unregister,
)
from autocast_explorer.core.experiment.routes import RouteCall, RouteResult
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.experiment.timing import measure_paired
from autocast_explorer.core.reports.report import report_markdown
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.gui.charts.speedup_chart import SpeedupChart
from autocast_explorer.gui.features.experiment.controls import ControlsPanel
from autocast_explorer.gui.features.routes.view import RoutesView

FAKE = RouteKind(
    name="fake",
    label="fake autocast",
    help="eager's measurement again under another name",
    tip="A route this test registers and takes away again.",
    color="#123456",
    module=__name__,
)
TINY = {"widths": (32, 16, 4), "batch": 8, "min_time": 0.02}


def measure(call: RouteCall) -> RouteResult:
    """The fake route's `measure`: eager's float32 vs autocast, timed paired again."""
    model, x, low, reference = call.model, call.x, call.low, call.reference

    def lower() -> object:
        with autocast_context(low):
            return model(x)

    timing = measure_paired(
        [lambda: model(x), lower], call.min_time, call.reporter, labels=["float32", "fake"]
    )
    output = lower()
    error, agreement = reference.compare(output)
    return RouteResult(
        name="fake",
        lower_dtype=dtype_name(low),
        plain=timing.stats[0],
        lower=timing.stats[1],
        output_dtype={"plain": "float32", "lower": dtype_name(output.dtype)},
        error=error,
        agreement=agreement,
        finding="eager again, renamed",
        interval=timing.interval,
    )


@pytest.fixture
def fake_route():
    register(FAKE)
    yield FAKE
    unregister(FAKE.name)


@pytest.fixture
def fake_result(fake_route):
    return run_experiment(ExperimentConfig(routes=("fake", "eager"), **TINY))


def test_the_fake_is_registered_only_inside_the_fixture(fake_route):
    assert route_names() == ("eager", "compiled", "implicit", "fake")


def test_run_help_lists_the_fake_with_its_line(fake_route, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "eager float32: eager, compiled, implicit, fake (default eager:" in help_text
    assert "fake: eager's measurement again under another name)" in help_text


def test_the_config_accepts_orders_and_describes_the_fake(fake_route):
    assert ExperimentConfig(routes="fake,eager").routes == ("eager", "fake")
    with pytest.raises(ConfigError, match="must be some of eager, compiled, implicit, fake"):
        ExperimentConfig(routes="eager,bogus")
    with pytest.raises(ConfigError, match="training mode measures eager autocast only"):
        ExperimentConfig(routes="eager,fake", mode="train")
    assert config_properties()["routes"]["items"]["enum"] == list(route_names())
    assert "fake" in config_properties()["routes"]["items"]["enum"]


def test_the_engine_measures_the_fake_by_its_module(fake_result):
    eager, fake = fake_result.routes
    assert (eager.name, fake.name) == ("eager", "fake")
    assert fake.lower_dtype == "bfloat16" and fake.output_dtype["lower"] == "bfloat16"
    assert fake.plain.median_ms > 0 and fake.lower.median_ms > 0
    # The fake's lower side is eager's autocast output again: the same error.
    assert fake.error.sqnr_db == pytest.approx(eager.error.sqnr_db)
    # The document keeps the fake and is valid under the schema made from the registry now.
    data = fake_result.to_dict()
    assert [r["name"] for r in data["routes"]] == ["eager", "fake"]
    errors = list(Draft202012Validator(result_schema()).iter_errors(data))
    assert errors == []


def test_summary_and_report_have_a_fake_row(fake_result):
    fake = fake_result.routes[1]
    summary = format_summary(fake_result)
    row = next(line for line in summary.splitlines() if line.startswith("  fake "))
    assert "fake autocast (bfloat16)" in row
    assert "    fake: eager again, renamed" in summary
    report = report_markdown(fake_result)
    row = next(line for line in report.splitlines() if line.startswith("| fake |"))
    assert f"| {fake.plain.median_ms:.4g} |" in row
    assert "| fake autocast (bfloat16) | bfloat16 |" in row


def test_the_window_has_a_checkbox_for_the_fake(fake_route, qtbot):
    panel = ControlsPanel()
    qtbot.addWidget(panel)
    check = panel.routeSelector.findChild(QCheckBox, "routeFakeCheck")  # the footer, beside Run
    assert check.text() == "fake" and check.toolTip() == FAKE.tip
    assert list(panel.routeChecks) == ["eager", "compiled", "implicit", "fake"]
    check.setChecked(True)
    assert panel.routes() == ("eager", "fake")


def test_the_routes_tab_draws_and_names_the_fake(fake_result, qtbot):
    view = RoutesView()
    qtbot.addWidget(view)
    assert "<b>fake</b> (eager's measurement again under another name)" in view.introLabel.text()
    assert view.latencyChart.drawn()["title"].count("eager, compiled, implicit, fake") == 1
    assert "Tick compiled or implicit or fake" in view.latencyChart.drawn()["hint"]
    view.show_result(fake_result)
    table = view.findChild(QTableWidget, "routesTable")
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["eager", "fake"]
    assert table.item(1, 4).text() == "fake autocast (bfloat16)"
    assert view.latencyChart.drawn()["ticks"] == ["eager\nbfloat16", "fake\nbfloat16"]


def test_the_sweep_draws_the_fake_in_its_colour(fake_route, qtbot, timing_noise):
    timing_noise.clear(1.0)  # its call can tell (a route that cannot is not drawn)
    config = ExperimentConfig(routes=("eager", "fake"), **TINY)
    result = run_sweep(config, "batch", (2, 8), probe_onednn=False, adaptive=False)
    assert [[r.name for r in p.routes] for p in result.points] == [["fake"], ["fake"]]
    chart = SpeedupChart()
    qtbot.addWidget(chart)
    chart.begin("batch", [2, 8])
    chart.show_points(result.points)
    drawn = chart.drawn()
    values, speedups = drawn["routes"]["fake"]
    assert values == [2.0, 8.0]
    assert speedups == pytest.approx([p.routes[0].speedup for p in result.points])
    assert all(math.isfinite(s) for s in speedups)
    assert drawn["route_colors"] == {"fake": "#123456"}
    assert re.search(r"color:\s*#123456;?\">╌ fake<", drawn["route_legend"])


def test_each_detail_field_is_one_route_s_and_described_by_it():
    details = [key for kind in route_kinds() for key in kind.details]
    assert len(details) == len(set(details))
    assert set(details) <= set(RouteResult.model_fields)
    described = RouteResult.model_fields["kernels"].description
    assert described == "implicit: oneDNN GEMMs in fpmath mode bf16"
    with pytest.raises(ValueError, match="compile_s is compiled's"):
        register(dataclasses.replace(FAKE, details={"compile_s": "seconds"}))
    with pytest.raises(ValueError, match="not an identifier"):
        register(dataclasses.replace(FAKE, name="fa,ke"))
    assert "fake" not in route_names()
