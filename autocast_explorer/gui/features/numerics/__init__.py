from autocast_explorer.gui.features.numerics.feature import install

__all__ = ["install"]
