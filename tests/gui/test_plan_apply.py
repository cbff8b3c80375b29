"""Apply (`planApplyButton`) makes the chosen plan the experiment's: the next Run measures its
dtype, layers kept in float32, threads and route. The plans are made by hand (every value
known); the run is the engine's own, on the tiny config."""

from __future__ import annotations

import functools

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QPushButton

from autocast_explorer.core.planning.document import PlanChoice
from autocast_explorer.core.planning.search import make_plan
from autocast_explorer.gui.features.plan.worker import PlanBackend
from tests.gui.helpers import run_to_end
from tests.plan_documents import interval, plan_of


def _plan_choosing(window, route: str, dtype: str, keep: tuple[str, ...]):
    chosen = PlanChoice(
        route=route,
        dtype=dtype,
        threads=1,
        keep_float32=keep,
        speedup_interval=interval(1.1, 1.3, 1.2),
        criterion_value=99.8,
    )
    return plan_of("plan", window.current_config()).model_copy(update={"chosen": chosen})


@pytest.mark.parametrize(
    ("route", "dtype", "routes"),
    [("eager", "float16", ("eager",)), ("implicit", "bfloat16", ("eager", "implicit"))],
)
def test_apply_then_run_measures_the_chosen_plan(window, qtbot, route, dtype, routes):
    view = window.planView
    window.context.show_view("plan")
    button = window.findChild(QPushButton, "planApplyButton")
    assert button is view.applyButton and not button.isEnabled()  # no plan yet
    assert button.shortcut() == QKeySequence("Ctrl+Alt+A")
    assert "next Run measures it (Ctrl+Alt+A)" in button.toolTip()
    assert window.current_config().threads != 1 and window.current_config().routes == ("eager",)

    view.show_plan(_plan_choosing(window, route, dtype, ("fc2",)))
    assert button.isEnabled()
    with qtbot.waitSignal(view.planApplied) as applied:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    state = window.experiment_state.config
    assert applied.args[0] == state
    assert (state.dtype, state.threads, state.keep_float32, state.routes) == (
        dtype,
        1,
        ("fc2",),
        routes,
    )
    assert view.summaryLabel.text().endswith("Applied: the next Run measures the chosen plan.")

    result = run_to_end(qtbot, window)
    config = result.config
    assert (config.dtype, config.threads, config.keep_float32, config.routes) == (
        dtype,
        1,
        ("fc2",),
        routes,
    )
    assert [r.name for r in result.routes] == ([] if routes == ("eager",) else list(routes))
    kept = {layer.name: layer.kept_float32 for layer in result.layers}
    assert kept == {"fc1": False, "relu1": False, "fc2": True}


def test_a_float32_plan_keeps_the_config_s_dtype_and_keep_set(window, qtbot):
    window.set_config(window.current_config().replace(keep_float32=("fc1",)))
    view = window.planView
    plan = _plan_choosing(window, "compiled", "float32", ())
    view.show_plan(plan.model_copy(update={"outcome": "float32"}))
    assert view.apply_plan()
    state = window.experiment_state.config
    assert (state.dtype, state.keep_float32, state.threads, state.routes) == (
        plan.config.dtype,
        ("fc1",),
        1,
        ("eager", "compiled"),
    )


FAULT = "autocast_explorer.examples.planted_faults:float16_overflow"


def _plan_for_keep_set(window, qtbot, keep: tuple[str, ...], signal_name: str):
    from autocast_explorer.core.experiment.config import ExperimentConfig

    config = ExperimentConfig(
        model=FAULT, dtype="float16", min_time=0.02, threads=1, keep_float32=keep
    )
    window.set_config(config)
    view = window.planView
    window.context.show_view("plan")
    # core's own search, on the eager route alone (nothing compiles on a busy machine's time)
    view.backend = PlanBackend(make_plan=functools.partial(make_plan, routes=("eager",)))
    view.criterionEdit.setText("agree>=99%")
    view.budgetSpin.setValue(30)
    with qtbot.waitSignal(getattr(view, signal_name), timeout=120_000) as done:
        assert view.start_plan()
    return done.args[0]


def test_the_tab_plans_with_the_experiment_s_keep_set(window, qtbot, timing_noise):
    """core's search, for real: the state's keep set is in every lower candidate."""
    timing_noise.clear(2.0)
    plan = _plan_for_keep_set(window, qtbot, ("norm",), "planFinished")
    assert plan.config.keep_float32 == ("norm",)
    lowered = [c for c in plan.candidates if c.dtype != "float32"]
    assert lowered and all(c.keep_float32[0] == "norm" for c in lowered)
    assert ("norm", "amplify") in {tuple(c.keep_float32) for c in lowered if c.met}


def test_the_tab_refuses_a_keep_pattern_that_names_no_layer(window, qtbot):
    message = _plan_for_keep_set(window, qtbot, ("amplfy",), "planFailed")
    assert "keep_float32: 'amplfy' matches no layer; nearest: " in message
    assert window.planView.statusLabel.text().startswith("Failed: ")


def test_the_chosen_plan_s_flipped_examples_are_said_in_the_tab(window):
    from autocast_explorer.core.planning.document import PlanFlips

    view = window.planView
    plan = plan_of("plan", window.current_config())
    chosen = plan.chosen.model_copy(update={"flipped": PlanFlips(count=3, held_out=449)})
    view.show_plan(plan.model_copy(update={"chosen": chosen}))
    assert view.outcomeLabel.text().endswith(
        "(agree>=99.5% holds); 3 of 449 held-out examples flipped."
    )
