from autocast_explorer.gui.features.plan.feature import install

__all__ = ["install"]
