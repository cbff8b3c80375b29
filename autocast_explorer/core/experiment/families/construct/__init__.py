"""The built-in families' models and inputs, built with torch alone from a config's JSON dict.

The explorer builds with these functions and a report's reproduce.py pastes their source
(core/reports/reproduce.py), so the script rebuilds exactly the model the explorer measured.
Code here may use only torch, the standard library and the other functions pasted beside it.
"""
