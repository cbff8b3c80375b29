"""One experiment: config, model families, guards, timing protocol, capture, engine, result.

Importing the package installs the families' rules into the config (config sits below the
families and asks them through config.family_rules), so any import of core.experiment.config
comes with them.
"""

from autocast_explorer.core.experiment import families as _families  # noqa: F401
