from autocast_explorer.gui.features.sweeps.feature import install

__all__ = ["install"]
