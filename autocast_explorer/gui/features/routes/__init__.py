"""The Routes tab: eager autocast, torch.compile and oneDNN's implicit bf16 side by side."""

from autocast_explorer.gui.features.routes.feature import install

__all__ = ["install"]
