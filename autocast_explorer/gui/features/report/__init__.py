from autocast_explorer.gui.features.report.feature import install

__all__ = ["install"]
