from autocast_explorer.gui.features.ops.feature import install

__all__ = ["install"]
