from autocast_explorer.gui.features.presentation.mode import install

__all__ = ["install"]
