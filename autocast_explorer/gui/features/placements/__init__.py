from autocast_explorer.gui.features.placements.feature import install

__all__ = ["install"]
