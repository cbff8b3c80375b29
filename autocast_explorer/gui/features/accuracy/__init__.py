"""The Accuracy tab: a trained model's held-out answers in float32 and under autocast.

A real-data run in Inference mode brings it to the front; Training mode's per-epoch scores of
both copies stream into its chart through the context's `experimentStep`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from autocast_explorer.gui.charts.epoch_accuracy_chart import EpochAccuracyChart
from autocast_explorer.gui.features.accuracy.view import AccuracyView
from autocast_explorer.gui.shell.context import AppContext
from autocast_explorer.gui.shell.handles import Handle

TAB_TIP = (
    "Real data: held-out accuracy in float32 and under autocast, the interval of the "
    "difference, and the rows whose answer changed."
)


class AccuracyFeed(QObject):
    """Routes the window's run signals to the Accuracy view (slots on the GUI thread)."""

    def __init__(self, ctx: AppContext, view: AccuracyView) -> None:
        super().__init__(ctx)
        self._ctx = ctx
        self.view = view
        self._dtype = "bfloat16"
        ctx.experimentStarted.connect(self._on_started)
        ctx.experimentStep.connect(self._on_step)

    @Slot(object)
    def _on_started(self, config: object) -> None:
        if getattr(config, "data", "synthetic") == "synthetic":
            return
        self._dtype = str(getattr(config, "dtype", "bfloat16"))
        self.view.epochAccuracyPlot.clear()
        if getattr(config, "mode", "infer") != "train":
            self._ctx.show_view("accuracy")

    @Slot(object)
    def _on_step(self, progress: object) -> None:
        epoch = getattr(progress, "epoch", 0)
        plain = getattr(progress, "accuracy_plain", None)
        if epoch and plain is not None:
            auto = getattr(progress, "accuracy_autocast", None)
            self.view.epochAccuracyPlot.add_epoch(epoch, plain, auto, self._dtype)


def install(ctx: AppContext) -> None:
    view = AccuracyView()
    # A pointer at this view (a lesson) frames the rows whose answer changed.
    ctx.add_view("accuracy", view, "Accuracy", TAB_TIP, focus=view.flipBox)
    ctx.add_action(
        "&Accuracy on real data",
        lambda: ctx.show_view("accuracy"),
        menu="&View",
        before="viewDisplaySection",
        shortcut="F2",
        tip="Show the Accuracy tab: held-out answers in float32 and under autocast.",
    )

    def has_data() -> bool:
        result = ctx.last_result()
        return result is not None and result.data is not None

    ctx.add_chart_export(
        "epoch_accuracy", "Held-out &accuracy chart…", lambda: view.epochAccuracyPlot, has_data
    )
    feed = AccuracyFeed(ctx, view)
    ctx.publish(Handle("accuracyView", AccuracyView), view)
    ctx.publish(Handle("epochAccuracyPlot", EpochAccuracyChart), view.epochAccuracyPlot)
    ctx.publish(Handle("accuracyFeed", AccuracyFeed), feed)
