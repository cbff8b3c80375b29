"""The Routes tab: every registered route (core/experiment/route_kinds.py) side by side."""

from autocast_explorer.gui.features.routes.feature import install

__all__ = ["install"]
