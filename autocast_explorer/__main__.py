"""`python -m autocast_explorer` behaves exactly like the `autocast-explorer` script."""

import sys

from autocast_explorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
