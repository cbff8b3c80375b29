"""The whole suite uses the tester's kit the way a tester's project does.

Installed, the package registers `autocast_explorer.testing` through its `pytest11` entry point;
a source checkout that was never installed has no entry point, so it is named here as well.
Both register it under the same name, so it is loaded once either way.
"""

pytest_plugins = ["autocast_explorer.testing", "pytester"]
