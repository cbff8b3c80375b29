"""The Plan tab (Run › Find plan), its file and its chart export.

Registered as view `plan`, with its sensitivity chart as view `sensitivity` (a lesson frames
it). Not a result view: a plan belongs to the config it was searched for, and a new run or an
opened result leaves it shown (the tab says when the settings have changed since).
"""

from __future__ import annotations

from autocast_explorer.gui.charts.sensitivity_chart import SensitivityChart
from autocast_explorer.gui.features.plan.view import PlanView
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

TAB_TIP = (
    "So what should I run? The fastest route, dtype, threads and float32 keep-set that meets "
    "your criterion on this CPU, measured, with the layers that break it."
)
#: The Plan tab (`window.planView`) and its chart (`window.sensitivityChart`).
PLAN_VIEW = Handle("planView", PlanView)
SENSITIVITY_CHART = Handle("sensitivityChart", SensitivityChart)


def install(ctx: AppContext) -> None:
    view = PlanView(ctx)
    ctx.add_view("plan", view, "Plan", TAB_TIP, result_view=False)
    ctx.add_view_part("sensitivity", view.chart, within="plan")

    def find_plan() -> None:
        ctx.show_view("plan")
        if not view.start_plan():
            ctx.show_message(f"Not started: {view.runButton.toolTip()}")

    has_plan = lambda: view.last_plan is not None  # noqa: E731
    ctx.add_action(
        "Find &plan",
        find_plan,
        menu="&Run",
        name="findPlanAction",
        shortcut="Ctrl+Shift+F",
        tip="Search for the fastest plan that meets the Plan tab's criterion",
    )
    ctx.add_action(
        "Save p&lan as JSON…",
        view.save_dialog,
        menu="&File",
        before="exportMenu",
        name="savePlanAction",
        shortcut="Ctrl+Alt+P",
        tip="The plan shown in the Plan tab (autocast-explorer/plan/1)",
        enabled_when=has_plan,
    )
    ctx.add_chart_export(
        "sensitivity", "Layer &sensitivity chart…", lambda: view.chart, has_plan, new_section=True
    )
    view.shownChanged.connect(ctx.refresh_actions)
    ctx.publish(PLAN_VIEW, view)
    ctx.publish(SENSITIVITY_CHART, view.chart)
