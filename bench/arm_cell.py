"""One cell of the Arm matrix, run INSIDE the emulated arm64 Python (bench/arm_matrix.py starts it).

Imports torch once, then (1) asks torch directly, with plain nn modules and no explorer code:
capabilities, /proc/cpuinfo, oneDNN's bf16 answer, the output dtype of each family's layers
under bf16 autocast (or the error), and the dtype of a few listed ops; (2) runs the explorer's
command line in this process (`run` for every family, `ops`), keeping its JSON and its text;
(3) writes both to one JSON file for arm_matrix.py to compare. Behaviour only: no timing here
means anything under emulation.

    QEMU_CPU=neoverse-n1 ~/.cache/arm-emu/arm-python bench/arm_cell.py --out cell.json
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import io
import json
import os
import platform
import signal
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _map_resources() -> None:
    """resources/ is the package autocast_explorer.resources only in an install (setup.py
    maps it); run from the source tree, map it here as setup.py does."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "autocast_explorer.resources",
        ROOT / "resources" / "__init__.py",
        submodule_search_locations=[str(ROOT / "resources")],
    )
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_map_resources()

import torch  # noqa: E402
from torch import nn  # noqa: E402

#: The families' tiny configs: the same shapes for the explorer and the direct probe.
FAMILIES: dict[str, list[str]] = {
    "mlp": ["--model", "mlp", "--widths", "32,16,4", "--batch", "8"],
    "cnn": ["--model", "cnn", "--channels", "3,4", "--image", "8", "--classes", "4",
            "--batch", "2"],
    "transformer": [
        "--model", "transformer", "--d-model", "16", "--heads", "2", "--seq", "4",
        "--depth", "1", "--ff", "16", "--classes", "4", "--batch", "2",
    ],
    "lstm": [
        "--model", "rnn", "--cell", "lstm", "--features", "8", "--hidden", "8", "--seq", "3",
        "--depth", "1", "--classes", "4", "--batch", "2",
    ],
    "gru": [
        "--model", "rnn", "--cell", "gru", "--features", "8", "--hidden", "8", "--seq", "3",
        "--depth", "1", "--classes", "4", "--batch", "2",
    ],
}  # fmt: skip
COMMON = ["--min-time", "0.05", "--threads", "1"]
#: The ops the direct probe checks, beside the explorer's `ops` run of the same ones.
OPS = ("linear", "conv2d", "bmm", "lstm", "gru")


def cpuinfo() -> dict:
    """/proc/cpuinfo's first processor: Features and the MIDR fields, as the kernel gives them."""
    out: dict = {}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError as exc:
        return {"error": str(exc)}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key and key not in out:
            out[key] = value.strip()
    return out


def capabilities() -> dict:
    query = getattr(torch.cpu, "get_capabilities", None)
    caps = dict(query()) if query is not None else None
    return {
        "get_capabilities": caps,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "mkldnn_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()),
        "mkldnn_fp16": bool(torch.ops.mkldnn._is_mkldnn_fp16_supported()),
        "cpuinfo": cpuinfo(),
        "sve_vector_bits": sve_bits(),
    }


def sve_bits() -> int:
    """The SVE vector length the kernel gives this process (prctl PR_SVE_GET_VL), 0 if none."""
    libc = ctypes.CDLL(None, use_errno=True)
    length = libc.prctl(51, 0, 0, 0, 0)
    return (length & 0xFFFF) * 8 if length > 0 else 0


def _dtype(value: object) -> str:
    while isinstance(value, (tuple, list)):
        value = value[0]
    return str(value.dtype).replace("torch.", "") if isinstance(value, torch.Tensor) else ""


def direct_model(name: str) -> tuple[nn.Module, torch.Tensor]:
    """Plain torch modules of the kinds and shapes FAMILIES gives the explorer."""
    torch.manual_seed(0)
    if name == "mlp":
        return nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4)), torch.randn(8, 32)
    if name == "cnn":
        model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        return model, torch.randn(2, 3, 8, 8)
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(16, 2, 16, dropout=0.0, batch_first=True)
        return layer, torch.randn(2, 4, 16)
    cell = nn.LSTM if name == "lstm" else nn.GRU
    return cell(8, 8, 1, batch_first=True), torch.randn(2, 3, 8)


def direct_family(name: str) -> dict:
    """Each module kind's output dtype under bf16 autocast, eval + no_grad, or the error."""
    model, x = direct_model(name)
    model.eval()
    seen: dict[str, str] = {}

    def note(module: nn.Module, _inputs: object, output: object) -> None:
        seen.setdefault(type(module).__name__, _dtype(output))  # None: the output stays

    # A hook on a TransformerEncoderLayer turns its fused fast path off (the explorer wraps
    # forward instead); there only the layer's own output is read, with no hook at all.
    fused = isinstance(model, nn.TransformerEncoderLayer)
    hooks = [] if fused else [m.register_forward_hook(note) for m in model.modules()]
    caught: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as got, torch.no_grad():
            warnings.simplefilter("always")
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
        caught = sorted({str(w.message)[:200] for w in got})
        if fused:
            seen[type(model).__name__] = _dtype(out)
        return {"dtypes": seen, "output": _dtype(out), "error": "", "warnings": caught}
    except RuntimeError as exc:
        return {"dtypes": seen, "output": "", "error": str(exc)[:300], "warnings": caught}
    finally:
        for hook in hooks:
            hook.remove()


def direct_op(name: str) -> str:
    """The output dtype of one listed op under bf16 autocast with float32 inputs (or error)."""
    torch.manual_seed(0)
    calls = {
        "linear": lambda: torch.nn.functional.linear(torch.randn(4, 8), torch.randn(6, 8)),
        "conv2d": lambda: torch.nn.functional.conv2d(
            torch.randn(1, 3, 6, 6), torch.randn(2, 3, 3, 3)
        ),
        "bmm": lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5)),
        "lstm": lambda: nn.LSTM(4, 4)(torch.randn(3, 1, 4)),
        "gru": lambda: nn.GRU(4, 4)(torch.randn(3, 1, 4)),
    }
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            return _dtype(calls[name]())
    except RuntimeError as exc:
        return f"error: {str(exc)[:120]}"


def explorer(args: list[str], folder: Path, tag: str) -> dict:
    """Run the explorer's command line in this process; its exit code, JSON and text."""
    from autocast_explorer.cli import main

    path = folder / f"{tag}.json"
    text, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(err):
            code = main([*args, "--json", str(path)])
    except BaseException as exc:
        return {"code": None, "crash": traceback.format_exception_only(exc)[-1].strip()}
    doc = json.loads(path.read_text()) if path.is_file() else None
    return {"code": code, "text": text.getvalue(), "stderr": err.getvalue()[-2000:], "json": doc}


def isolated(work: Callable[[], dict], folder: Path, tag: str) -> dict:
    """Run `work` in a forked child: a kernel that dies (qemu's SIGILL on an instruction it
    does not emulate) costs that one check, not the cell. The parent's torch has used one
    thread only, so the fork inherits no OpenMP pool."""
    out = folder / f"{tag}.part.json"
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            out.write_text(json.dumps(work()))
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if out.is_file():
        return json.loads(out.read_text())
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return {"crash": f"killed by signal {sig} ({signal.Signals(sig).name})"}
    return {"crash": f"exit status {os.waitstatus_to_exitcode(status)}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--no-ops", action="store_true", help="skip the explorer's ops probe")
    parser.add_argument(
        "--capabilities-only", action="store_true", help="what torch and the kernel report only"
    )
    parser.add_argument("--direct-only", action="store_true", help="torch's side only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.direct_only:  # torch's side alone (to redo it without rerunning the explorer)
        with tempfile.TemporaryDirectory() as tmp:
            direct = {"capabilities": capabilities(), "direct": {}, "direct_ops": {}}
            for name in OPS:
                got = isolated(lambda name=name: {"out": direct_op(name)}, Path(tmp), f"o{name}")
                direct["direct_ops"][name] = got.get("out") or f"error: {got['crash']}"
            for name in args.families.split(","):
                direct["direct"][name] = isolated(
                    lambda n=name: direct_family(n), Path(tmp), f"d-{name}"
                )
        Path(args.out).write_text(json.dumps(direct, indent=1))
        return 0
    if args.capabilities_only:
        caps = {"torch": torch.__version__, "capabilities": capabilities()}
        Path(args.out).write_text(json.dumps(caps, indent=1))
        return 0
    cell: dict = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "capabilities": capabilities(),
        "direct": {},
        "direct_ops": {},
        "explorer": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in OPS:
            got = isolated(lambda name=name: {"out": direct_op(name)}, folder, f"op-{name}")
            cell["direct_ops"][name] = got.get("out") or f"error: {got['crash']}"
        for name in filter(None, args.families.split(",")):  # '' = the op probe only
            print(f"[arm_cell] {name}", file=sys.stderr, flush=True)
            cell["direct"][name] = isolated(lambda n=name: direct_family(n), folder, f"d-{name}")
            cell["explorer"][name] = isolated(
                lambda n=name: explorer(["run", *FAMILIES[n], *COMMON], folder, n),
                folder,
                f"e-{name}",
            )
        if not args.no_ops:
            print("[arm_cell] ops", file=sys.stderr, flush=True)
            cell["explorer"]["ops"] = isolated(
                lambda: explorer(["ops", "--op", ",".join(OPS)], folder, "ops"), folder, "e-ops"
            )
        Path(args.out).write_text(json.dumps(cell, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
