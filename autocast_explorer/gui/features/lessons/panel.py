"""The Lessons panel: the tutorial's steps as guided experiments, and its closing exercise.

Each step (core.lessons.LESSONS) explains one idea, sets the config, runs it live and shows what
*this* machine's measurement says (the lesson's check, computed by core), then brings the chart
that answers it to the front with a frame around it. Steps that need more than a result (stored
weight dtypes, direct op calls) run core.lessons.run_lesson on the window's shared runner; the
others run through the window exactly like pressing Run. The exercise is graded against the
latest measurement shown (core.lessons.EXERCISE.grade), never against an answer key.

A step keeps your measurement settings (time per mode, threads, allow slow, memory budget) and
sets everything else from the lesson, so a presenter can shorten every run at once.
"""

from __future__ import annotations

import functools
import html
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.core.learning.lessons import EXERCISE, LESSONS, Lesson, LessonOutcome
from autocast_explorer.gui.features.lessons.answer_chart import (
    ChartHighlight,
    answer_id,
    chart_target,
    chart_title,
)
from autocast_explorer.gui.features.lessons.steps import (
    StepRun,
    exercise_choices,
    lesson_task,
    match_line,
    step_config,
)
from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.actions import make_action
from autocast_explorer.gui.shell.labels import breakable, wrapping_label

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.learning.lessons import Grade, LessonRun
    from autocast_explorer.gui.shell.context import AppContext

EXERCISE_STEP = "exercise"


class LessonsPanel(QWidget):
    """objectName `lessonsPanel`, inside the dock `lessonsDock` (View › Lessons, Ctrl+L).

    Signals: `stepFinished(LessonOutcome)`, `stepFailed(str)`, `exerciseGraded(Grade)`.
    """

    stepFinished = Signal(object)
    stepFailed = Signal(str)
    exerciseGraded = Signal(object)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.setObjectName("lessonsPanel")
        self._ctx = ctx
        self.client = ctx.tasks("lessons")
        self._index = 0
        self._outcomes: dict[str, LessonOutcome] = {}
        self.last_run: StepRun | None = None
        self.last_grade: Grade | None = None
        self._awaiting: tuple[str, Lesson, ExperimentConfig] | None = None
        self._grade_answer: str | None = None
        self.highlight = ChartHighlight()
        self._build()
        ctx.experimentFinished.connect(self._on_experiment_finished)
        ctx.experimentFailed.connect(self._on_experiment_failed)
        ctx.experimentCancelled.connect(self._on_experiment_cancelled)
        # A step restored at start may name a chart whose tab is built after the first paint.
        ctx.featuresInstalled.connect(self._name_the_chart)
        self.client.finished.connect(self._on_task_finished)
        self.client.failed.connect(self._on_task_failed)
        self.client.cancelled.connect(self._on_task_cancelled)
        self.go_to(0)

    # ---- construction ---------------------------------------------------------------------
    def _build(self) -> None:
        """The step scrolls (its texts, outcome and the exercise); Previous / Next stay below."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = self._scroll = QScrollArea()
        scroll.setObjectName("lessonsScroll")
        scroll.setWidgetResizable(True)
        # A word wider than the panel (large text) scrolls sideways rather than being cut.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        body.setObjectName("lessonsBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(8)
        self._build_step_texts(layout)
        self._build_outcome_box()
        layout.addWidget(self.outcomeBox)
        self.tryNextLabel = wrapping_label(
            "lessonTryNext", "Something to try on your own.", rich=True
        )
        layout.addWidget(self.tryNextLabel)
        self._build_exercise_box()
        layout.addWidget(self.exerciseBox)
        self._set_choices(EXERCISE.choices)
        layout.addStretch(1)
        scroll.setWidget(body)
        self._revealing: QWidget | None = None
        scroll.verticalScrollBar().rangeChanged.connect(self._on_scroll_range)
        self.outcomeBox.installEventFilter(self)
        self.exerciseBox.installEventFilter(self)
        outer.addWidget(scroll, 1)
        outer.addLayout(self._build_nav())

    def _build_step_texts(self, layout: QVBoxLayout) -> None:
        """Where you are, the idea, the claim, the Run button and the chart that answers it."""
        self.stepLabel = wrapping_label(
            "lessonStep", "Where you are in the lessons (PgUp / PgDn).", rich=True
        )
        self.stepLabel.setStyleSheet(f"color: {style.MUTED};")
        self.titleLabel = wrapping_label("lessonTitle", "What this step is about.", rich=True)
        font = self.titleLabel.font()
        font.setPointSize(13)
        font.setBold(True)
        self.titleLabel.setFont(font)
        self.explanationLabel = wrapping_label(
            "lessonExplanation", "The idea, in plain words.", rich=True
        )
        self.claimLabel = wrapping_label(
            "lessonClaim", "What the tutorial says; the run checks it here.", rich=True
        )
        self.runStepAction = make_action(
            self._ctx.host(),
            "&Run this step",
            self.run_step,
            shortcut=["Ctrl+Return", "Ctrl+Enter"],
            tip="Set this lesson's config and measure it now",
        )
        self.runStepButton = QPushButton("▶ Run this step")
        self.runStepButton.setObjectName("runStepButton")
        self.runStepButton.setToolTip(self.runStepAction.toolTip())
        self.runStepButton.clicked.connect(self.run_step)
        self.chartLabel = wrapping_label(
            "lessonChart", "The chart that answers this step.", rich=True
        )
        for item in (
            self.stepLabel,
            self.titleLabel,
            self.explanationLabel,
            self.claimLabel,
            self.runStepButton,
            self.chartLabel,
        ):
            layout.addWidget(item)

    def _build_outcome_box(self) -> None:
        """What this machine's run showed: a headline, its sentences, and claim vs measurement."""
        self.outcomeBox = QFrame()
        self.outcomeBox.setObjectName("lessonOutcomeBox")
        self.outcomeBox.setFrameShape(QFrame.Shape.StyledPanel)
        box = QVBoxLayout(self.outcomeBox)
        box.setContentsMargins(8, 6, 8, 6)
        self.outcomeTitle = QLabel("What your run showed")
        self.outcomeTitle.setObjectName("lessonOutcomeTitle")
        self.outcomeHeadline = QLabel("")
        self.outcomeHeadline.setObjectName("lessonOutcome")
        self.outcomeSentences = QLabel("")
        self.outcomeSentences.setObjectName("lessonSentences")
        self.matchLabel = QLabel("")
        self.matchLabel.setObjectName("lessonMatch")
        for item in (
            self.outcomeTitle,
            self.outcomeHeadline,
            self.outcomeSentences,
            self.matchLabel,
        ):
            item.setWordWrap(True)
            item.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            item.setToolTip("Measured just now on this machine, in sentences (core.lessons).")
            box.addWidget(item)
        self.outcomeSentences.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.outcomeHeadline.font()
        bold.setBold(True)
        self.outcomeHeadline.setFont(bold)
        self.outcomeTitle.setStyleSheet(f"color: {style.MUTED};")

    def _build_exercise_box(self) -> None:
        """The last step: the question, one radio button per answer, Check and the grade."""
        self.exerciseBox = QWidget()
        self.exerciseBox.setObjectName("exerciseBox")
        ex = QVBoxLayout(self.exerciseBox)
        ex.setContentsMargins(0, 0, 0, 0)
        self.questionLabel = QLabel(breakable(EXERCISE.question))
        self.questionLabel.setTextFormat(Qt.TextFormat.PlainText)  # its quotes shown as typed
        self.questionLabel.setObjectName("exerciseQuestion")
        self.questionLabel.setWordWrap(True)
        qfont = self.questionLabel.font()
        qfont.setBold(True)
        self.questionLabel.setFont(qfont)
        ex.addWidget(self.questionLabel)
        self.choicesBox = QWidget()
        self.choicesBox.setObjectName("exerciseChoices")
        self._choices_layout = QVBoxLayout(self.choicesBox)
        self._choices_layout.setContentsMargins(8, 0, 0, 0)
        self.choiceGroup = QButtonGroup(self)
        ex.addWidget(self.choicesBox)
        self.checkButton = QPushButton("Check my answer")
        self.checkButton.setObjectName("checkAnswerButton")
        self.checkButton.setToolTip(
            "Graded against the latest measurement shown (a run is made first if there is none)."
        )
        self.checkButton.clicked.connect(self.check_answer)
        ex.addWidget(self.checkButton)
        self.gradeLabel = QLabel("")
        self.gradeLabel.setObjectName("exerciseGrade")
        self.gradeLabel.setWordWrap(True)
        self.gradeLabel.setTextFormat(Qt.TextFormat.PlainText)
        self.gradeLabel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.gradeLabel.setToolTip("Your answer compared with what this machine measured.")
        ex.addWidget(self.gradeLabel)

    def _build_nav(self) -> QHBoxLayout:
        """Previous / Next, with PgUp / PgDn actions (a presenter's remote sends those keys)."""
        w = self._ctx.host()
        nav = QHBoxLayout()
        nav.setContentsMargins(8, 4, 8, 6)
        self.previousAction = make_action(
            w,
            "&Previous step",
            self.previous_step,
            shortcut=QKeySequence(Qt.Key.Key_PageUp),
            tip="The previous lesson step",
        )
        self.nextAction = make_action(
            w,
            "&Next step",
            self.next_step,
            shortcut=QKeySequence(Qt.Key.Key_PageDown),
            tip="The next lesson step (a presenter's remote sends this key)",
        )
        self.previousButton = QPushButton("◀ Previous")
        self.previousButton.setObjectName("previousStepButton")
        self.previousButton.setToolTip(self.previousAction.toolTip())
        self.previousButton.clicked.connect(self.previous_step)
        self.nextButton = QPushButton("Next ▶")
        self.nextButton.setObjectName("nextStepButton")
        self.nextButton.setToolTip(self.nextAction.toolTip())
        self.nextButton.clicked.connect(self.next_step)
        nav.addWidget(self.previousButton)
        nav.addStretch(1)
        nav.addWidget(self.nextButton)
        return nav

    def _set_choices(self, choices: tuple[str, ...]) -> None:
        current = [b.text() for b in self.choiceGroup.buttons()]
        if current == list(choices):
            return
        checked = self.selected_answer()
        for button in self.choiceGroup.buttons():
            self.choiceGroup.removeButton(button)
            button.deleteLater()
        for choice in choices:
            button = QRadioButton(choice)
            button.setObjectName(f"choice_{choice}")
            button.setToolTip(f"Answer: torch.{choice}")
            button.setChecked(choice == checked)
            self.choiceGroup.addButton(button)
            self._choices_layout.addWidget(button)

    # ---- navigation -----------------------------------------------------------------------
    def steps(self) -> list[str]:
        """Step ids in order: the lessons, then 'exercise'."""
        return [lesson.id for lesson in LESSONS] + [EXERCISE_STEP]

    def step_index(self) -> int:
        """The step shown, counted from 0 as go_to() counts (the last one is the exercise)."""
        return self._index

    def current_lesson(self) -> Lesson | None:
        """The lesson shown (None on the exercise step)."""
        return LESSONS[self._index] if self._index < len(LESSONS) else None

    @Slot()
    def next_step(self) -> None:
        self.go_to(min(self._index + 1, len(self.steps()) - 1))

    @Slot()
    def previous_step(self) -> None:
        self.go_to(max(self._index - 1, 0))

    def go_to(self, index: int) -> None:
        """Show step `index` (0-based; the last one is the exercise)."""
        self._index = max(0, min(int(index), len(self.steps()) - 1))
        self._revealing = None
        self._scroll.verticalScrollBar().setValue(0)  # a step opens at its top
        lesson = self.current_lesson()
        total = len(LESSONS)
        self.previousButton.setEnabled(self._index > 0)
        self.nextButton.setEnabled(self._index < len(self.steps()) - 1)
        is_exercise = lesson is None
        self.exerciseBox.setVisible(is_exercise)
        for item in (self.explanationLabel, self.claimLabel, self.runStepButton, self.chartLabel):
            item.setVisible(not is_exercise)
        if lesson is None:
            self.stepLabel.setText(f"Exercise · after lesson {total} of {total}")
            self.titleLabel.setText("Check yourself")
            self.tryNextLabel.setText("")
            self.tryNextLabel.hide()
            self.outcomeBox.hide()
            result = self._ctx.last_result()
            if result is not None:
                self._set_choices(exercise_choices(result))
            self._show_grade(self.last_grade)
            self._reveal(self.questionLabel)
            return
        self.stepLabel.setText(f"Lesson {lesson.number} of {total}")
        self.titleLabel.setText(html.escape(lesson.title))
        self.explanationLabel.setText(html.escape(lesson.explanation))
        who = "The tutorial says:" if lesson.claim_by == "tutorial" else "A common assumption:"
        self.claimLabel.setText(f"<i>{who}</i> {html.escape(lesson.tutorial_claim)}")
        self._name_the_chart()
        self.tryNextLabel.setText(
            f"<i>Try next:</i> {html.escape(lesson.try_next)}" if lesson.try_next else ""
        )
        self.tryNextLabel.setVisible(bool(lesson.try_next))
        outcome = self._outcomes.get(lesson.id)
        self._show_outcome(outcome)
        if outcome is not None:
            self.show_chart(outcome.chart)

    @Slot()
    def _name_the_chart(self) -> None:
        lesson = self.current_lesson()
        if lesson is not None:
            self.chartLabel.setText(
                f"Answered by: <b>{html.escape(chart_title(self._ctx, lesson))}</b>"
            )

    @Slot(bool)
    def _on_dock_visible(self, visible: bool) -> None:
        """PgUp/PgDn/Ctrl+Return belong to the lessons only while the panel is shown."""
        for action in (self.previousAction, self.nextAction, self.runStepAction):
            action.setEnabled(visible)
        if not visible:
            self._unframe()

    # ---- charts ---------------------------------------------------------------------------
    def show_chart(self, chart_id: str) -> str:
        """Bring the view `chart_id` names to the front with a frame around its answering part;
        returns the id shown (the id asked for, unless the dtype chart stands in for it)."""
        used, target = chart_target(self._ctx, chart_id)
        self._ctx.show_view(used)
        self._frame().attach(target, used)
        return answer_id(chart_id, used)

    def _frame(self) -> ChartHighlight:
        # The frame is a child of the page its chart is on, so it goes when that page goes.
        if not shiboken6.isValid(self.highlight):
            self.highlight = ChartHighlight()
        return self.highlight

    def _unframe(self) -> None:
        self._frame().attach(None, None)

    def highlighted_chart(self) -> str | None:
        """objectName of the framed chart (e.g. 'dtypePlot'), None when nothing is framed."""
        frame = self._frame()
        target = frame.target
        if target is None or not shiboken6.isValid(target) or not frame.isVisible():
            return None
        return target.objectName()

    # ---- running --------------------------------------------------------------------------
    @Slot()
    def run_step(self) -> bool:
        """Set the step's config and measure it; False (with a message) if it cannot start."""
        lesson = self.current_lesson()
        if lesson is None:
            self.check_answer()
            return False
        ctx = self._ctx
        if not ctx.engine_ready():
            return self._refuse("PyTorch is still loading; the step can run in a moment.")
        if self.client.busy():
            return self._refuse("Another run is in progress: wait for it or Cancel (Esc).")
        config = step_config(lesson, ctx.valid_config())
        ctx.request_sweep(None)  # a step measures no sweep (the preset list stops naming one)
        ctx.set_config(config)
        if lesson.uses_probe:
            errors = ctx.input_errors()
            if errors:
                return self._refuse("This step's config is refused: " + "; ".join(errors.values()))
            self._awaiting = ("task", lesson, config)
            if not self.client.start(functools.partial(lesson_task, lesson, config)):
                self._awaiting = None
                return self._refuse("Another run is in progress: wait for it or Cancel (Esc).")
            ctx.hide_banner()
            ctx.show_message(f"Measuring lesson {lesson.number}…")
        else:
            self._awaiting = ("window", lesson, config)
            if not ctx.run_experiment():
                self._awaiting = None
                errors = ctx.input_errors()
                why = "; ".join(errors.values()) if errors else "the window cannot run now"
                return self._refuse(f"This step cannot start: {why}.")
        self.runStepButton.setEnabled(False)
        self._revealing = None
        self.outcomeBox.show()
        self.outcomeHeadline.setText("Measuring…")
        self.outcomeSentences.setText("")
        self.matchLabel.setText("")
        return True

    def _refuse(self, message: str) -> bool:
        self.outcomeBox.show()
        self.outcomeHeadline.setText(message)
        self.outcomeSentences.setText("")
        self.matchLabel.setText("")
        self.stepFailed.emit(message)
        return False

    def _take(self, kind: str) -> tuple[Lesson, ExperimentConfig] | None:
        if self._awaiting is None or self._awaiting[0] != kind:
            return None
        _kind, lesson, config = self._awaiting
        self._awaiting = None
        self.runStepButton.setEnabled(True)
        return lesson, config

    @Slot(object)
    def _on_experiment_finished(self, result: ExperimentResult) -> None:
        if self._grade_answer is not None:
            answer, self._grade_answer = self._grade_answer, None
            self.grade(answer)
        taken = self._take("window")
        if taken is not None:
            lesson = taken[0]
            self._finish(StepRun(lesson, result, None, lesson.check(result, None)))

    @Slot(object)
    def _on_task_finished(self, run: LessonRun) -> None:
        taken = self._take("task")
        if taken is None:
            return
        run_result = run.result
        self._ctx.show_message(f"Lesson {run.lesson.number} measured.", 4000)
        self._ctx.show_result(run_result)
        self._finish(StepRun(run.lesson, run_result, run.probe, run.outcome))

    def _finish(self, run: StepRun) -> None:
        self.last_run = run
        self._outcomes[run.lesson.id] = run.outcome
        if self.current_lesson() is run.lesson:
            self._show_outcome(run.outcome)
            self._reveal_outcome()
        self.show_chart(run.outcome.chart)
        self.stepFinished.emit(run.outcome)

    def _reveal_outcome(self) -> None:
        """Scroll the panel so the outcome just measured is in view."""
        self._reveal(self.outcomeBox)

    def _reveal(self, widget: QWidget) -> None:
        """Scroll the panel so `widget` is in view: now, and again when the new text is laid out
        (the scroll range grows, the box moves) until another step is shown."""
        self._revealing = widget
        self._scroll.ensureWidgetVisible(widget, 0, 0)

    @Slot(int, int)
    def _on_scroll_range(self, _low: int, _high: int) -> None:
        if self._revealing is not None:
            self._scroll.ensureWidgetVisible(self._revealing, 0, 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A box gets its final size when the layout runs: scroll to what is revealed then.
        if (
            self._revealing is not None
            and watched in (self.outcomeBox, self.exerciseBox)
            and event.type() in (QEvent.Type.Resize, QEvent.Type.Move)
        ):
            self._scroll.ensureWidgetVisible(self._revealing, 0, 0)
        return False

    @Slot(str)
    def _on_experiment_failed(self, message: str) -> None:
        self._grade_answer = None
        if self._take("window") is not None:
            self._refuse(f"The run failed: {message}")

    @Slot(str)
    def _on_task_failed(self, message: str) -> None:
        if self._take("task") is not None:
            self._ctx.show_message("The lesson's run failed.", 4000)
            self._refuse(f"The run failed: {message}")

    @Slot()
    def _on_experiment_cancelled(self) -> None:
        self._grade_answer = None
        if self._take("window") is not None:
            self._refuse("Cancelled: press Run this step to measure again.")

    @Slot()
    def _on_task_cancelled(self) -> None:
        if self._take("task") is not None:
            self._ctx.show_message("Lesson cancelled.", 4000)
            self._refuse("Cancelled: press Run this step to measure again.")

    def _show_outcome(self, outcome: LessonOutcome | None) -> None:
        if outcome is None:
            self.outcomeBox.hide()
            self._unframe()
            return
        self.outcomeBox.show()
        self.outcomeHeadline.setText(outcome.headline)
        self.outcomeSentences.setText("\n".join(f"• {s}" for s in outcome.sentences))
        lesson = self.current_lesson()
        tutorial = lesson is None or lesson.claim_by == "tutorial"
        text, color = match_line(outcome, tutorial)
        self.matchLabel.setText(text)
        self.matchLabel.setStyleSheet(f"color: {color}; font-weight: bold;")

    def outcome(self, lesson_id: str) -> LessonOutcome | None:
        """The outcome of the last run of this lesson (None: not run yet)."""
        return self._outcomes.get(lesson_id)

    def shown_text(self) -> str:
        """The outcome box as a reader sees it: headline, then one '• ' line per sentence
        ('' while it is hidden). Testers compare it with the LessonOutcome they got."""
        if self.outcomeBox.isHidden():
            return ""
        return f"{self.outcomeHeadline.text()}\n{self.outcomeSentences.text()}".strip()

    # ---- exercise -------------------------------------------------------------------------
    def selected_answer(self) -> str:
        button = self.choiceGroup.checkedButton()
        return button.text() if button is not None else ""

    def select_answer(self, answer: str) -> None:
        for button in self.choiceGroup.buttons():
            if button.text() == answer:
                button.setChecked(True)
                return
        raise KeyError(answer)

    @Slot()
    def check_answer(self) -> Grade | None:
        """Grade the selected answer against the latest measurement (measure first if none)."""
        answer = self.selected_answer()
        result = self._ctx.last_result()
        if result is not None and any(la.kind == "Linear" for la in result.layers):
            return self.grade(answer)
        ctx = self._ctx
        ctx.request_sweep(None)
        ctx.set_config(step_config(LESSONS[1], ctx.valid_config()))
        self._grade_answer = answer
        if not ctx.run_experiment():
            self._grade_answer = None
            self.gradeLabel.setText(
                "There is no measurement to check against yet and a run cannot start now "
                "(PyTorch loading or another run in progress)."
            )
            return None
        self.gradeLabel.setText("Measuring, then checking your answer…")
        return None

    def grade(self, answer: str) -> Grade | None:
        result = self._ctx.last_result()
        if result is None:
            return None
        self._set_choices(exercise_choices(result))
        grade = EXERCISE.grade(answer, result)
        self.last_grade = grade
        self._show_grade(grade)
        self.show_chart("dtype")
        self.exerciseGraded.emit(grade)
        return grade

    def _show_grade(self, grade: Grade | None) -> None:
        if grade is None:
            self.gradeLabel.setText("")
            return
        self.gradeLabel.setText(("✓ " if grade.correct else "✗ ") + grade.explanation)
        color = style.OK if grade.correct else style.BAD
        self.gradeLabel.setStyleSheet(f"color: {color};")
