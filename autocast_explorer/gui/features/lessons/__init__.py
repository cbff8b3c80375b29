from autocast_explorer.gui.features.lessons.panel import install

__all__ = ["install"]
