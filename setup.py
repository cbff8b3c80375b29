"""The one thing pyproject.toml cannot say: the packages found under autocast_explorer/ plus the
top-level resources/ folder installed as `autocast_explorer.resources` (the design card keeps
data beside the code, not inside it; a wheel and an editable install both see it at the same
importlib.resources location)."""

from setuptools import find_packages, setup

RESOURCES = "autocast_explorer.resources"

setup(
    packages=[*find_packages(include=["autocast_explorer", "autocast_explorer.*"]), RESOURCES],
    package_dir={RESOURCES: "resources"},
)
