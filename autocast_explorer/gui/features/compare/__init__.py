from autocast_explorer.gui.features.compare.window import install

__all__ = ["install"]
