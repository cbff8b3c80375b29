from autocast_explorer.gui.features.experiment.feature import install

__all__ = ["install"]
