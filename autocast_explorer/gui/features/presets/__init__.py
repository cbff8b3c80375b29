from autocast_explorer.gui.features.presets.box import install

__all__ = ["install"]
