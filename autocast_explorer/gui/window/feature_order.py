"""Which features the window installs, and in what order (their tabs appear in this order).

Adding a tab is one line here. The first group is what the window's first picture shows; the
app's window paints with it and builds the second right after.
"""

from __future__ import annotations

from autocast_explorer.gui.features import experiment, lessons, presentation, presets
from autocast_explorer.gui.shell.context import Feature

#: What the first picture shows, built before the first paint: the controls with the preset
#: box above them, the Overview and Layers tabs, the text scale and theme, the lessons dock.
FIRST_PAINT_FEATURES: tuple[Feature, ...] = (
    experiment.install,  # Overview and Layers, the three result charts
    presentation.install,  # text scale, projector theme, full screen, hidden controls
    presets.install,  # the preset picker above the controls (filled after the first paint)
    lessons.install,  # the guided lessons dock
)


def later_features() -> tuple[Feature, ...]:
    """The other features, in tab order after Overview and Layers. Imported here, not at the
    top: a progressive window (the app's) paints before it imports and builds them."""
    from autocast_explorer.gui.features import (
        accuracy,
        compare,
        hardware,
        numerics,
        ops,
        placements,
        plan,
        report,
        routes,
        sweeps,
        training,
    )

    return (
        numerics.install,  # Layer error, Agreement, Op trace
        ops.install,  # the live op-policy probe
        sweeps.install,  # Sweeps tab, sweep files
        placements.install,  # per-call vs hoisted vs pre-cast
        training.install,  # Training tab: loss curves, memory saved for backward, gradients
        accuracy.install,  # Accuracy tab: held-out answers on real data, the flipped rows
        routes.install,  # Routes tab: eager, torch.compile and implicit bf16 side by side
        plan.install,  # Plan tab: a measured precision plan, the layers that break it
        hardware.install,  # CPU facts, oneDNN kernel, roofline
        compare.install,  # Compare runs window
        report.install,  # File › Export report
    )
