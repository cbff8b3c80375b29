"""The program's data files (presets, JSON Schemas, icon, desktop entry), installed as the
package `autocast_explorer.resources` (see setup.py) and read with importlib.resources."""
