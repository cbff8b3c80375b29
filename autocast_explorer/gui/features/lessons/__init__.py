from autocast_explorer.gui.features.lessons.dock import install

__all__ = ["install"]
