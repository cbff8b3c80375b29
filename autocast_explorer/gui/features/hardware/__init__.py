from autocast_explorer.gui.features.hardware.feature import install

__all__ = ["install"]
