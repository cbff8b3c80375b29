"""The Plan tab shows what core planned: its sentence, its sensitivity rows, every candidate and
the code to paste; it runs the search for the experiment's config and stops it on Cancel.

The search itself is core's (its own tests time real candidates); here the tab runs on a fake
backend that returns documents made by hand (tests/plan_documents.py), so every value read
back is known.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QFontMetrics
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QWidget

from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.document import PlanDocument
from autocast_explorer.core.planning.words import candidate_cells
from autocast_explorer.core.runtime.progress import Cancelled
from autocast_explorer.gui.features.plan.worker import PlanBackend
from autocast_explorer.gui.shell import style
from tests.core.test_plan_words import SENTENCES
from tests.plan_documents import SNIPPET, plan_of

TIMEOUT_MS = 20_000


@dataclass(frozen=True)
class FakeVerification:
    passed: bool
    lines: tuple[str, ...]


class FakeSearch:
    """make_plan over `candidates` candidates: one progress report each, Cancel checked before
    each; the candidate numbered `hold_at` waits for `release` (a candidate being timed)."""

    def __init__(self, plan: PlanDocument, candidates: int = 4, hold_at: int | None = None):
        self.plan = plan
        self.candidates = candidates
        self.hold_at = hold_at
        self.release = threading.Event()
        self.started: list[int] = []
        self.calls: list[tuple] = []

    def __call__(self, config, criterion, budget_s, progress=None, cancel=None) -> PlanDocument:
        self.calls.append((config, str(criterion), budget_s))
        for i in range(self.candidates):
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            if progress is not None:
                progress(i / self.candidates, f"candidate {i + 1} of {self.candidates}")
            self.started.append(i)
            if i == self.hold_at:
                assert self.release.wait(TIMEOUT_MS / 1000)
        return self.plan


def plan_view(window, search=None, verify=None):
    view = window.planView
    view.backend = PlanBackend(
        make_plan=search or FakeSearch(plan_of("plan", window.current_config())),
        verify_plan=verify or (lambda plan, cancel=None: FakeVerification(True, ())),
    )
    window.context.show_view("plan")
    return view


def test_the_plan_tab_is_registered_with_its_chart(window):
    view = window.planView
    assert window.findChild(QWidget, "planView") is view
    tabs = window.resultTabs
    assert tabs.tabText(tabs.indexOf(view)) == "Plan"
    assert window.context.view("plan") is view
    assert window.context.view("sensitivity") is window.sensitivityChart is view.chart
    assert window.context.view_title("sensitivity") == "Plan"
    assert window.findChild(QLineEdit, "planCriterionEdit").text() == "agree>=99.5%"
    for name in ("planRunButton", "planCopyButton", "planVerifyButton", "planCancelButton"):
        assert window.findChild(QPushButton, name) is not None, name
    assert view.runButton.isEnabled()
    assert not view.copyButton.isEnabled() and not view.verifyButton.isEnabled()  # no plan yet
    assert window.findChild(QWidget, "sensitivityChart").drawn()["hint"].startswith("Find plan")


def test_the_criterion_is_checked_as_it_is_typed(window, qtbot):
    view = plan_view(window)
    view.criterionEdit.clear()
    qtbot.keyClicks(view.criterionEdit, "agree>99")
    assert view.criterionError.isVisible()
    assert view.criterionError.text() == (
        "criterion 'agree>99': expected one of accuracy-drop<=N, agree>=N, sqnr>=N"
    )
    assert not view.runButton.isEnabled()
    qtbot.keyClicks(view.criterionEdit, ".5%")  # 'agree>99.5%': still no '>='
    assert not view.runButton.isEnabled()
    view.criterionEdit.setText("sqnr>=40")
    assert not view.criterionError.isVisible() and view.runButton.isEnabled()

    view.criterionEdit.setText("accuracy-drop<=0.5")  # synthetic data has no accuracy
    assert view.criterionError.text().startswith("accuracy-drop needs real data")
    assert not view.runButton.isEnabled()
    window.set_config(window.current_config().replace(data="digits"))  # the config follows
    assert not view.criterionError.isVisible() and view.runButton.isEnabled()


@pytest.mark.parametrize("outcome", ["plan", "float32", "none"])
def test_each_outcome_is_said_in_core_s_sentence(window, outcome):
    view = plan_view(window)
    view.show_plan(plan_of(outcome, window.current_config()))
    assert view.outcomeLabel.text() == SENTENCES[outcome]
    chosen = {"plan": 3, "float32": 1, "none": 2}[outcome]
    assert view.chosen_row() == chosen
    assert (
        view.rows()[chosen][0]
        == {
            "plan": "compiled bfloat16 on 2 threads, keeping fc2 in float32",
            "float32": "compiled float32 on 2 threads",
            "none": "eager bfloat16 on 1 thread",
        }[outcome]
    )
    assert view.summaryLabel.text() == (
        "4 candidates timed in 41.5 s of a 60 s budget. Planned for MLP 32,16,4 · batch 8 · "
        "relu · head none · autocast bfloat16."
    )


def test_the_table_lists_every_candidate_and_why_it_lost(window):
    view = plan_view(window)
    plan = plan_of("plan", window.current_config())
    view.show_plan(plan)
    # The cells are core's words for each candidate (their values: tests/core/test_plan_words.py).
    criterion = parse_criterion(plan.criterion)
    assert view.rows() == [candidate_cells(c, criterion) for c in plan.candidates]
    assert view.rows()[3][4] == "≈ 126 MB" and view.rows()[2][5] == "agree 97.50% < 99.5%"
    assert view.table.horizontalHeaderItem(2).text() == "Agree"
    assert view.table.item(3, 1).text() == "2.90×\n(2.70–3.10)"  # the interval under its figure


def test_the_chart_draws_the_rows_by_damage_with_their_time_share(window):
    view = plan_view(window)
    view.show_plan(plan_of("plan", window.current_config()))
    drawn = window.sensitivityChart.drawn()
    assert drawn["names"] == ["fc2", "fc1", "fc3", "relu"]
    assert drawn["values"] == [97.5, 99.6, 100.0, None]  # relu: not measured, no bar
    assert drawn["labels"] == ["97.50%", "99.60%", "100.00%", "not measured"]
    assert drawn["colors"] == [style.BAD, style.OK, style.OK, style.UNKNOWN_DTYPE_COLOR]
    assert drawn["threshold"] == 99.5
    assert drawn["marked"] == "fc2" and drawn["ticks"][0] == "▶ fc2"
    assert drawn["time_shares"] == ["45% → 40%", "30% → 25%", "5% → 8%", "— → —"]
    assert "first&nbsp;divergent: <b>fc2</b>" in drawn["title"]
    bar = window.sensitivityChart.bar_at(99.0, 1.1)
    assert bar is not None and bar.name == "fc1"
    assert "leave-out): 99.00%" in bar.tooltip and "30% → 25%" in bar.tooltip


def test_copy_code_puts_the_snippet_on_the_clipboard(window, qtbot):
    view = plan_view(window)
    assert view.copy_snippet() is False  # nothing to copy yet
    view.show_plan(plan_of("plan", window.current_config()))
    assert view.snippetEdit.isReadOnly() and view.snippetEdit.toPlainText() == SNIPPET
    assert QFontInfo(view.snippetEdit.font()).fixedPitch()  # the font really drawn
    QApplication.clipboard().setText("")
    qtbot.mouseClick(view.copyButton, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == SNIPPET


def test_find_plan_searches_the_experiment_s_config_and_shows_the_plan(window, qtbot):
    search = FakeSearch(plan_of("float32", window.current_config()))
    view = plan_view(window, search)
    view.criterionEdit.setText(" SQNR >= 40 ")
    view.budgetSpin.setValue(90)
    progress: list[tuple[float, str]] = []
    view.client.progress.connect(lambda f, m: progress.append((f, m)))
    with qtbot.waitSignal(view.planFinished, timeout=TIMEOUT_MS) as finished:
        qtbot.mouseClick(view.runButton, Qt.MouseButton.LeftButton)
    assert search.calls == [(window.current_config(), "sqnr>=40", 90.0)]
    assert finished.args[0] is search.plan and view.last_plan is search.plan
    reported = [(i / 4, f"candidate {i + 1} of 4") for i in range(4)]
    assert progress[0] == reported[0]  # the first always; the rest at most every 0.2 s
    assert [report for report in reported if report in progress] == progress
    assert view.outcomeLabel.text() == SENTENCES["float32"]
    assert view.runButton.isEnabled() and not view.cancelButton.isEnabled()
    assert view.copyButton.isEnabled() and view.verifyButton.isEnabled()


def test_cancel_stops_the_search_within_one_candidate(window, qtbot):
    search = FakeSearch(plan_of("plan", window.current_config()), candidates=10, hold_at=2)
    view = plan_view(window, search)
    shown_before = plan_of("none", window.current_config())
    view.show_plan(shown_before)
    assert view.start_plan()
    qtbot.waitUntil(lambda: len(search.started) == 3, timeout=TIMEOUT_MS)
    assert view.cancelButton.isEnabled() and not view.runButton.isEnabled()
    with qtbot.waitSignal(view.planCancelled, timeout=TIMEOUT_MS):
        qtbot.mouseClick(view.cancelButton, Qt.MouseButton.LeftButton)
        search.release.set()  # the candidate being timed ends; no other starts
    assert search.started == [0, 1, 2]
    assert view.statusLabel.text() == "Cancelled: no plan from a search stopped early."
    assert view.last_plan is shown_before  # what was shown stays
    assert view.runButton.isEnabled()


def test_verify_says_what_the_fresh_process_found(window, qtbot):
    asked: list[PlanDocument] = []
    lines = ("speedup 0.91× (95%: 0.85–0.97) against float32 eager: the plan said 2.90×",)

    def verify(plan, cancel=None):
        asked.append(plan)
        return FakeVerification(False, lines)

    view = plan_view(window, verify=verify)
    plan = plan_of("plan", window.current_config())
    view.show_plan(plan)
    with qtbot.waitSignal(view.verifyFinished, timeout=TIMEOUT_MS) as done:
        qtbot.mouseClick(view.verifyButton, Qt.MouseButton.LeftButton)
    assert asked == [plan] and done.args[0].lines == lines
    assert view.verifyLabel.text() == (
        "<b>✗ It did not hold.</b><br>• speedup 0.91× (95%: 0.85–0.97) against float32 eager: "
        "the plan said 2.90×"
    )
    assert style.BAD in view.verifyLabel.styleSheet()


def test_the_plan_is_saved_as_its_json_document(window, tmp_path):
    view = plan_view(window)
    action = window.findChild(type(window.runAction), "savePlanAction")
    assert not action.isEnabled() and not view.save_plan(tmp_path / "none.json")
    plan = plan_of("plan", window.current_config())
    view.show_plan(plan)
    assert action.isEnabled() and window.exportActions["sensitivity"].isEnabled()
    path = tmp_path / "plan.json"
    assert view.save_plan(path)
    assert PlanDocument.from_json(path.read_text(encoding="utf-8")) == plan
    assert json.loads(path.read_text(encoding="utf-8"))["outcome"] == "plan"


def test_the_tab_says_when_the_settings_moved_on_since_the_plan(window):
    view = plan_view(window)
    view.show_plan(plan_of("plan", window.current_config()))
    assert "changed since" not in view.summaryLabel.text()
    window.set_config(window.current_config().replace(batch=16))
    assert view.summaryLabel.text().endswith(
        "The settings on the left have changed since: Find plan again for them."
    )


@pytest.mark.parametrize(
    ("size", "scale"), [((1024, 640), 1.0), ((1024, 640), 1.5), ((1920, 1080), 1.0)]
)
def test_a_plan_shown_fits_the_tab_whole(window, qtbot, size, scale):
    """With a plan shown, at 1024×640 with the Lessons panel (100% and 150% text) and at
    1920×1080: no sideways scrolling, the chart at least its minimum, every sentence whole, and
    the chart beside the table only where both get room."""
    from tests.gui.test_layout import assert_label_whole, settle

    view = plan_view(window)
    view.show_plan(plan_of("float32", window.current_config()))
    if window.lessonsDock.isVisible() != (size == (1024, 640)):
        window.lessonsAction.trigger()
    window.presentation.set_font_scale(scale)
    window.resize(*size)
    settle(window)
    area = view.parentWidget().parentWidget()
    assert view.width() <= area.viewport().width()
    chart = window.sensitivityChart
    assert chart.height() >= chart.minimumHeight() and chart.width() >= chart.minimumWidth()
    for label in (view.outcomeLabel, view.summaryLabel):
        assert_label_whole(label)
    side_by_side = chart.geometry().top() == view.table.geometry().top()
    assert side_by_side is (size == (1920, 1080))
    table = view.table
    shown = sum(table.rowHeight(i) for i in range(table.rowCount()))
    assert table.viewport().height() >= shown  # every candidate without scrolling the table
    window.presentation.set_font_scale(1.0)
    qtbot.waitUntil(lambda: not window.statusMessageLabel.isVisible(), timeout=5000)


def test_the_chart_prints_as_many_rows_as_its_height_holds(qtbot):
    """Twelve rows: ten at most, fewer in a chart too short to print their names one under
    the other (pyqtgraph would leave overlapping names out), the first divergent one always."""
    from autocast_explorer.core.planning.document import SensitivityRow
    from autocast_explorer.gui.charts.sensitivity_chart import MAX_ROWS, SensitivityChart

    rows = tuple(SensitivityRow(name=f"block{i}", one_in=99.0 + i / 10) for i in range(12))
    plan = plan_of("plan").model_copy(update={"sensitivity": rows, "first_divergent": "block11"})
    chart = SensitivityChart()
    qtbot.addWidget(chart)
    chart.resize(600, 900)
    chart.show()
    chart.show_plan(plan)
    qtbot.waitUntil(lambda: len(chart.drawn()["names"]) == MAX_ROWS)
    names = chart.drawn()["names"]
    assert names[:9] == [f"block{i}" for i in range(9)] and names[-1] == "block11"
    assert "10 most damaging of 12 rows" in chart.drawn()["title"]
    assert chart.minimumHeight() > SensitivityChart.MINIMUM[1]  # grown for the plan's rows
    chart.setMinimumHeight(0)
    chart.resize(600, 260)
    qtbot.waitUntil(lambda: len(chart.drawn()["names"]) < MAX_ROWS)
    shown = chart.drawn()["names"]
    assert shown[-1] == "block11" and len(shown) >= 1
    line = chart.getPlotItem().getAxis("left").style["tickFont"]
    view = chart.getPlotItem().getViewBox()
    assert len(shown) * QFontMetrics(line).height() <= view.height()  # no name over another
    assert f"{len(shown)} most damaging of 12 rows" in chart.drawn()["title"]
