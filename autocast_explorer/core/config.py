"""The documented import path for ExperimentConfig; the module lives in core.experiment.config.

`from autocast_explorer.core.config import ExperimentConfig` is part of the tester contract, so
this name stays an alias of the real module (the same module object, not a copy).
"""

import sys

from autocast_explorer.core.experiment import config as _config

sys.modules[__name__] = _config
