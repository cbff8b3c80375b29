"""Autocast Explorer: measure what torch.autocast("cpu") does on this machine."""

__version__ = "0.1.0"
