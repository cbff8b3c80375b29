from autocast_explorer.gui.features.training.feature import install

__all__ = ["install"]
