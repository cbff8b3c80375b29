"""Run every bench script in this folder, one after another (`make bench`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failed = 0
    for script in sorted(HERE.glob("*.py")):
        is_script = "__main__" in script.read_text()
        if script.name == "run_all.py" or not is_script:  # helpers such as window_common.py
            continue
        print(f"\n## {script.name}\n", flush=True)
        failed |= subprocess.run([sys.executable, str(script)]).returncode != 0
    sys.exit(failed)
