"""The Training tab: live loss curves of the float32 and autocast copies, memory, dtypes.

The window's own runs stream each training step's losses (core's StepProgress, plain data)
through the context's `experimentStep`; a run that starts in training mode brings this view to
the front with empty curves sized for its steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from autocast_explorer.gui.charts.loss_chart import LossChart
from autocast_explorer.gui.charts.saved_bytes_chart import SavedBytesChart
from autocast_explorer.gui.features.training.view import TrainingView
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.training import StepProgress

TAB_TIP = (
    "Training mode: loss curves of a float32 and an autocast copy, memory saved for backward, "
    "gradient and per-layer dtypes."
)


class TrainingFeed(QObject):
    """Routes the window's run signals to the Training view (slots on the GUI thread)."""

    def __init__(self, ctx: AppContext, view: TrainingView) -> None:
        super().__init__(ctx)
        self._ctx = ctx
        self.view = view
        ctx.experimentStarted.connect(self._on_started)
        ctx.experimentStep.connect(self._on_step)
        # a run that stops early still shows every step it streamed (redraws are throttled)
        ctx.experimentCancelled.connect(self._on_stopped)
        ctx.experimentFailed.connect(self._on_stopped)

    @Slot(object)
    def _on_started(self, config: ExperimentConfig) -> None:
        if config.mode != "train":
            return
        self.view.start(config)
        self._ctx.show_view("training")

    @Slot(object)
    def _on_step(self, progress: StepProgress) -> None:
        self.view.add_step(progress)

    @Slot()
    @Slot(str)
    def _on_stopped(self, _message: str = "") -> None:
        self.view.lossPlot.flush()


def install(ctx: AppContext) -> None:
    view = TrainingView()
    ctx.add_view("training", view, "Training", TAB_TIP)
    ctx.add_view_part("loss", view.lossPlot, within="training")

    def has_training() -> bool:
        result = ctx.last_result()
        return result is not None and result.train is not None

    ctx.add_chart_export("loss", "Training l&oss chart…", lambda: view.lossPlot, has_training)
    ctx.add_chart_export(
        "saved_bytes",
        "&Memory saved for backward chart…",
        lambda: view.savedBytesPlot,
        has_training,
    )
    feed = TrainingFeed(ctx, view)
    ctx.publish(Handle("trainingView", TrainingView), view)
    ctx.publish(Handle("lossPlot", LossChart), view.lossPlot)
    ctx.publish(Handle("savedBytesPlot", SavedBytesChart), view.savedBytesPlot)
    ctx.publish(Handle("trainingFeed", TrainingFeed), feed)
