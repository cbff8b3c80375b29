"""The route selector beside Run and the Routes tab (the implicit route: nothing compiles)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QTableWidget, QWidget

from autocast_explorer.core.experiment.routes import RouteResult
from tests.edits import edited
from tests.gui.helpers import RUN_TIMEOUT_MS, run_to_end


def test_route_selector_sets_the_config_s_routes(window):
    selector = window.findChild(QWidget, "routeSelector")
    eager = selector.findChild(QCheckBox, "routeEagerCheck")
    implicit = selector.findChild(QCheckBox, "routeImplicitCheck")
    compiled = selector.findChild(QCheckBox, "routeCompiledCheck")
    assert eager.isChecked() and not eager.isEnabled()  # the reference, always measured
    assert window.current_config().routes == ("eager",)
    implicit.setChecked(True)
    compiled.setChecked(True)
    assert window.current_config().routes == ("eager", "compiled", "implicit")
    window.set_config(window.current_config().replace(routes=("eager",)))
    assert not implicit.isChecked() and not compiled.isChecked()
    window.findChild(QComboBox, "modeCombo").setCurrentIndex(1)  # training: eager only
    assert not implicit.isEnabled() and window.current_config().routes == ("eager",)


@pytest.fixture
def implicit_run(qtbot, window, timing_noise):
    qtbot.mouseClick(window.findChild(QCheckBox, "routeImplicitCheck"), Qt.MouseButton.LeftButton)
    timing_noise.clear(1.0)  # the route's call cannot lose its interval to a busy machine
    return run_to_end(qtbot, window)


def test_routes_view_draws_each_route_of_the_run(window, implicit_run):
    view = window.findChild(QWidget, "routesView")
    table = view.findChild(QTableWidget, "routesTable")
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["eager", "implicit"]
    implicit = implicit_run.routes[1]
    assert table.item(1, 1).text() == f"{implicit.plain.median_ms:.4g}"
    assert table.item(1, 5).text() == "float32"  # tensors stay float32 on this route
    speedup = table.item(1, 3).text()  # its own call, the figure with its 95% interval
    call = implicit_run.route_call(implicit)
    assert call.graded and not call.rough
    assert speedup == implicit.speedup_text(call) and f"({implicit.interval.text()})" in speedup
    drawn = view.latencyChart.drawn()
    medians = [s.median_ms for r in implicit_run.routes for s in (r.plain, r.lower)]
    assert drawn["heights"] == pytest.approx(medians)
    assert drawn["x"] == pytest.approx([-0.2, 0.2, 0.8, 1.2])
    # What the implicit side computed: bf16 maths only where oneDNN's log showed a GEMM.
    computed = "bf16 maths" if implicit.kernels else "float32 maths"
    assert drawn["ticks"] == ["eager\nbfloat16", f"implicit\n{computed}"]
    assert table.item(1, 4).text().startswith("fp32_precision" if implicit.kernels else "float32")
    assert view.compileChart.drawn()["hint"] == "no compiled route"
    assert implicit.finding in view.findingsLabel.text()


def test_compile_time_has_its_own_bar(window, implicit_run):
    """A compiled route's compile time (here put into the run's result) is drawn apart."""
    eager = implicit_run.routes[0]
    compiled = RouteResult(
        name="compiled",
        lower_dtype="bfloat16",
        plain=eager.plain,
        lower=eager.lower,
        output_dtype={"plain": "float32", "lower": "bfloat16"},
        compile_s=12.5,
        compile_estimate_s=10.0,
        graphs=2,
        recompiles=0,
        finding="compiled in 12.5 s (2 graphs)",
    )
    view = window.findChild(QWidget, "routesView")
    view.show_result(edited(implicit_run, routes=(eager, compiled)))
    assert view.compileChart.drawn() == {
        "heights": [12.5, 10.0],
        "ticks": ["measured\n12.5 s", "forecast\n10.0 s"],
        "hint": "",
    }
    table = view.findChild(QTableWidget, "routesTable")
    assert (table.item(1, 6).text(), table.item(1, 9).text()) == ("12.5 s", "0")


def test_a_sweep_compares_routes_over_batch(window, qtbot, timing_noise):
    """The implicit route ticked beside Run: every sweep point measures it too, and the
    speedup chart draws its speedup per batch as a curve of its own."""
    timing_noise.clear(1.0)  # each route's call can tell, whatever the machine's load
    qtbot.mouseClick(window.findChild(QCheckBox, "routeImplicitCheck"), Qt.MouseButton.LeftButton)
    tab = window.sweeps.sweeps
    tab.set_sweep("batch", "2,8")
    with qtbot.waitSignal(tab.sweepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        assert tab.start_sweep()
    result = blocker.args[0]
    assert result.config.routes == ("eager", "implicit")
    speedups = [p.routes[0].speedup for p in result.points]
    assert [p.routes[0].name for p in result.points] == ["implicit", "implicit"]
    values, drawn = tab.speedupPlot.drawn()["routes"]["implicit"]
    assert values == [2.0, 8.0] and drawn == pytest.approx(speedups)
    assert "compiled" not in tab.speedupPlot.drawn()["routes"]
