"""Lessons, presets and comparisons built on measured results."""
