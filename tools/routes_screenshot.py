"""`python -m tools.routes_screenshot [PATH]`: the Routes tab after a run of every route.

Used by `make screenshot-routes` under Xvfb (xcb), like tools/screenshot.py: runs the tutorial's
MLP with every registered route (compiling takes tens of seconds the first time)
and saves the window with the Routes tab in front. Every number is measured on the machine
that made it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.route_kinds import route_names
from tools.screenshot import shoot_view

CONFIG = ExperimentConfig(routes=route_names(), threads=1, min_time=0.3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="docs/routes.png")
    args = parser.parse_args(argv)
    return shoot_view(
        CONFIG, "routes", Path(args.path), lambda w: w.routesView.findingsLabel.text()
    )


if __name__ == "__main__":
    sys.exit(main())
