import subprocess
import sys

import pytest


@pytest.mark.process
def test_importing_core_never_imports_qt():
    code = (
        "import sys, pkgutil, importlib, autocast_explorer.core as core\n"
        "prefix = 'autocast_explorer.core.'\n"
        "names = [m.name for m in pkgutil.walk_packages(core.__path__, prefix)]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "qt = ('PySide6', 'pyqtgraph', 'shiboken6')\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in qt)\n"
        "print(len(names), bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, bad = out.stdout.split(" ", 1)
    assert int(count) >= 30  # every module of every concept package was imported
    assert bad.strip() == "[]"


@pytest.mark.process
def test_config_module_does_not_import_torch():
    code = "import sys, autocast_explorer.core.experiment.config; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
