"""The engine: pure Python + torch. Never imports Qt or pyqtgraph.

This package's __init__ stays import-light (no torch) so that the window can read configs and
validate input before torch has finished loading; import submodules directly.
"""
