"""A user's files that break a rule: data and checkpoints holding tensors numpy cannot hold
(float8, sparse, quantized, meta, nested, complex), empty and truncated archives, archives
missing a record or holding a short or garbled one, the legacy format cut short, an .npz, a
gzip or a text file named .pt, a pickled class or array, a .pt holding something other than
a dict of tensors, an .npz whose header claims more than the file holds, rows the model
cannot take or score (no values, a label past the widest layer, one class), a folder, FIFO or
link loop where a file goes, and paths the window cannot save to. Each is one line naming the
file or the tensor and the rule, the documented exit code (2: refused before anything is
measured), and no output file appears, whole or half-written; the user's files are left
exactly as they were.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from autocast_explorer.cli import main
from tests.fuzz.conftest import snapshot

FAST = ["--epochs", "1", "--batch", "4", "--min-time", "0.01", "--threads", "1"]
ROWS = 8

#: Tensor kinds a .pt may hold that no array can be made of: (kind, what the line says).
TENSOR_KINDS: dict[str, str] = {
    **{f"float8_{k}": f"is float8_{k}" for k in ("e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz")},
    "float8_e8m0fnu": "is float8_e8m0fnu",
    "complex32": "is complex32",
    "complex64": "is complex64",
    "bits8": "is bits8",
    "bits16": "is bits16",
    **{layout: f"is a {layout} tensor" for layout in ("sparse_coo", "sparse_csr", "sparse_csc")},
    "sparse_bsr": "is a sparse_bsr tensor",
    "sparse_bsc": "is a sparse_bsc tensor",
    "qint8": "is quantized (qint8)",
    "quint8": "is quantized (quint8)",
    "qint32": "is quantized (qint32)",
    "qint8_per_channel": "is quantized (qint8)",
    "meta": "is a meta tensor",
    "nested": "is a NestedTensor",
}
#: Kinds that need two dimensions (a label vector cannot be one).
MATRIX_ONLY = {"sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "nested"}


def bad_tensor(kind: str, shape: tuple[int, ...]) -> torch.Tensor:
    """A tensor of `kind` and `shape` (nested: two rows of different lengths)."""
    base = torch.arange(float(np.prod(shape))).reshape(shape) % 3
    with warnings.catch_warnings():  # making quantized and CSR tensors warns (deprecated, beta)
        warnings.simplefilter("ignore")
        if kind.startswith(("float8", "complex", "bits")):
            return torch.zeros(shape, dtype=getattr(torch, kind))
        if kind == "sparse_coo":
            return base.to_sparse()
        if kind in ("sparse_csr", "sparse_csc"):
            return getattr(base, f"to_{kind}")()
        if kind in ("sparse_bsr", "sparse_bsc"):
            return getattr(base, f"to_{kind}")((2, 2))
        if kind == "qint8_per_channel":
            scales, zeros = torch.full((shape[0],), 0.1), torch.zeros(shape[0], dtype=torch.long)
            return torch.quantize_per_channel(base, scales, zeros, 0, torch.qint8)
        if kind.startswith(("qint", "quint")):
            return torch.quantize_per_tensor(base, 0.1, 0, getattr(torch, kind))
        if kind == "meta":
            return torch.empty(shape, device="meta")
        assert kind == "nested"
        return torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)], layout=torch.jagged)


def _good_arrays() -> dict[str, torch.Tensor]:
    return {"x": torch.randn(ROWS, 6), "y": torch.arange(ROWS) % 3}


def _save(path: Path, tensors: dict[str, torch.Tensor]) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.save(tensors, path)
    return str(path)


def _state(widths=(6, 4, 3)) -> dict[str, torch.Tensor]:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.model import build_model

    return dict(build_model(ExperimentConfig(widths=widths)).state_dict())


Make = Callable[[Path], list[str]]


def _data(path_of: Callable[[Path], str]) -> Make:
    return lambda tmp: ["run", "--data", path_of(tmp), *FAST]


def _checkpoint(path_of: Callable[[Path], str]) -> Make:
    def argv(tmp: Path) -> list[str]:
        data = _save(tmp / "good.pt", _good_arrays())
        return ["run", "--data", data, "--widths", "6,4,3", "--checkpoint", path_of(tmp), *FAST]

    return argv


def _tensor_cases() -> list:
    cases = []
    for kind, words in TENSOR_KINDS.items():
        for key in ("x", "y"):
            if key == "y" and kind in MATRIX_ONLY:
                continue

            def data(tmp: Path, kind=kind, key=key) -> str:
                arrays = _good_arrays()
                arrays[key] = bad_tensor(kind, tuple(arrays[key].shape))
                return _save(tmp / "d.pt", arrays)

            cases.append(
                pytest.param(_data(data), f"data: d.pt: {key} {words}", id=f"{key}-{kind}")
            )

        def weights(tmp: Path, kind=kind) -> str:
            state = _state()
            state["fc1.weight"] = bad_tensor(kind, (4, 6))
            return _save(tmp / "w.pt", state)

        expected = f"checkpoint: w.pt: fc1.weight {words}"
        cases.append(pytest.param(_checkpoint(weights), expected, id=f"checkpoint-{kind}"))
    return cases


def _cut(fraction: float, name: str, tensors: Callable[[], dict[str, torch.Tensor]]):
    def path_of(tmp: Path) -> str:
        whole = tmp / "whole.bin"
        _save(whole, tensors())
        blob = whole.read_bytes()
        whole.unlink()
        keep = max(0, min(len(blob) - 1, round(len(blob) * fraction)))
        (tmp / name).write_bytes(blob[:keep])
        return str(tmp / name)

    return path_of


def _archive_cases() -> list:
    cases = []
    for fraction in (0.0, 0.001, 0.1, 0.5, 0.9, 1.0):
        what = "the file is empty (0 bytes)" if fraction == 0 else "truncated or not a torch.save"
        cases.append(
            pytest.param(
                _data(_cut(fraction, "d.pt", _good_arrays)),
                f"data: d.pt: {what}",
                id=f"data-cut-{fraction}",
            )
        )
        cases.append(
            pytest.param(
                _checkpoint(_cut(fraction, "w.pt", _state)),
                f"checkpoint: w.pt: {what}",
                id=f"checkpoint-cut-{fraction}",
            )
        )
    for suffix in (".npz", ".safetensors"):

        def empty(tmp: Path, suffix=suffix) -> str:
            (tmp / f"e{suffix}").write_bytes(b"")
            return str(tmp / f"e{suffix}")

        cases.append(pytest.param(_data(empty), f"data: e{suffix}: the file is empty", id=suffix))
    cases.append(
        pytest.param(
            _checkpoint(lambda tmp: _empty_file(tmp / "w.safetensors")),
            "checkpoint: w.safetensors: the file is empty (0 bytes)",
            id="checkpoint-empty.safetensors",
        )
    )
    return cases


def _empty_file(path: Path) -> str:
    path.write_bytes(b"")
    return str(path)


def npz_claiming(shape: tuple[int, ...], key: str = "x", compressed: bool = False):
    """An .npz whose `key` header claims `shape` (float32) but holds 96 bytes of it."""

    def path_of(tmp: Path) -> str:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": shape}
        )
        good = {"x": np.zeros((ROWS, 6), np.float32), "y": np.arange(ROWS) % 3}
        method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
        with zipfile.ZipFile(tmp / "big.npz", "w", method) as archive:
            for name, array in good.items():
                member = io.BytesIO()
                if name == key:
                    member.write(header.getvalue() + b"\0" * 96)
                else:
                    np.lib.format.write_array(member, array)
                archive.writestr(f"{name}.npy", member.getvalue())
        return str(tmp / "big.npz")

    return path_of


def _claim_cases() -> list:
    claims = [
        ((10**10, 6), "x", False),
        ((10**10, 6), "x", True),
        ((10**12,), "y", False),
        ((2**31, 2**31), "x", False),
        ((ROWS, 7), "x", False),  # one value more per row than it holds: still truncated
    ]
    return [
        pytest.param(
            _data(npz_claiming(shape, key, compressed)),
            f"data: big.npz: {key} claims shape {shape} of float32",
            id=f"claims-{key}-{'x'.join(map(str, shape))}-{'deflated' if compressed else 'stored'}",
        )
        for shape, key, compressed in claims
    ]


def npz(**arrays: np.ndarray):
    def path_of(tmp: Path) -> str:
        np.savez(tmp / "mine.npz", **arrays)
        return str(tmp / "mine.npz")

    return path_of


X = np.random.default_rng(0).normal(size=(40, 6)).astype(np.float32)
LABELS = np.arange(40) % 3
BIG_LABEL = np.where(np.arange(40) == 3, 10**9, LABELS)
TOO_MANY_CLASSES = np.where(np.arange(40) == 5, 2**20, LABELS)
FAULT_CASES = [
    (npz(x=X, y=BIG_LABEL), [], "data: y: 1,000,000,001 classes (labels 0…1000000000) are more"),
    (npz(x=X, y=TOO_MANY_CLASSES), [], "data: y: 1,048,577 classes"),
    (npz(x=np.zeros((40, 0)), y=LABELS), [], "data: x: each row must hold at least one value"),
    (npz(x=np.zeros((40, 0, 3)), y=LABELS), [], "got shape (40, 0, 3)"),
    (npz(x=np.zeros((40, 3, 0)), y=LABELS), ["--model", "cnn"], "got shape (40, 3, 0)"),
    (
        npz(x=np.zeros((2, 2**20 + 1), np.int8), y=np.array([0, 1])),
        [],
        "data: x: rows of 1,048,577",
    ),
    (
        npz(x=np.zeros((4, 2**16 + 1, 2, 2), np.int8), y=np.arange(4) % 2),
        ["--model", "cnn", "--channels", "3,4"],
        "data: x: images of 65,537 channels are more than the CNN takes",
    ),
    (npz(x=X, y=np.zeros(40, np.int64)), [], "data: y: every row has label 0"),
    (npz(x=X, y=np.full(40, 7)), [], "data: y: every row has label 7"),
    (npz(x=X, y=np.ones(40), classes=np.array(3)), [], "data: y: every row has label 1"),
]


def _fault_cases() -> list:
    return [
        pytest.param(
            lambda tmp, make=make, extra=extra: ["run", "--data", make(tmp), *FAST, *extra],
            expected,
            id=f"fault-{i}",
        )
        for i, (make, extra, expected) in enumerate(FAULT_CASES)
    ]


def _not_a_file(kind: str, name: str) -> Callable[[Path], str]:
    def path_of(tmp: Path) -> str:
        path = tmp / name
        if kind == "folder":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(name)
        return str(path)

    return path_of


NOT_A_FILE = {
    "folder": "is a folder, not a file",
    "fifo": "is a FIFO (a named pipe), not a file",
    "loop": "is a symbolic link loop",
}


def _path_cases() -> list:
    cases = []
    for kind, words in NOT_A_FILE.items():
        cases.append(
            pytest.param(_data(_not_a_file(kind, "d.npz")), f"d.npz: {words}", id=f"data-{kind}")
        )
        cases.append(
            pytest.param(
                _checkpoint(_not_a_file(kind, "w.safetensors")),
                f"w.safetensors: {words}",
                id=f"checkpoint-{kind}",
            )
        )
        cases.append(
            pytest.param(
                lambda tmp, kind=kind: [
                    "run",
                    "--model",
                    _not_a_file(kind, "m.py")(tmp) + ":build",
                    "--min-time",
                    "0.01",
                ],
                f"m.py: {words}",
                id=f"model-{kind}",
            )
        )
    return cases


def _rewritten(edit: Callable[[str, bytes], bytes | None]) -> Callable[[Path, dict], None]:
    """A torch.save archive with each member `edit`ed (None: left out)."""

    def write(path: Path, tensors: dict) -> None:
        whole = path.with_suffix(".whole")
        _save(whole, tensors)
        with zipfile.ZipFile(whole) as source, zipfile.ZipFile(path, "w") as target:
            for info in source.infolist():
                data = edit(info.filename, source.read(info))
                if data is not None:
                    target.writestr(info, data)
        whole.unlink()

    return write


def _legacy_cut(path: Path, tensors: dict) -> None:
    """torch.save's pre-1.6 (not zip) format, its second half cut off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.save(tensors, path, _use_new_zipfile_serialization=False)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _npz_named_pt(path: Path, tensors: dict) -> None:
    with path.open("wb") as file:
        np.savez(file, **{key: value.numpy() for key, value in tensors.items()})


def _save_bytes(tensors: dict) -> bytes:
    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


def _holding(make: Callable[[dict], object]) -> Callable[[Path, dict], None]:
    return lambda path, tensors: _save(path, make(tensors))  # type: ignore[arg-type]


NOT_TORCH_SAVE = "truncated or not a torch.save file ("
REFUSED = "refused by torch.load(weights_only=True) (Unsupported global: GLOBAL "
#: How else a .pt goes wrong: (id, how it is written from the good tensors, what the line says
#: after the file's name). Each is tried as --data and as --checkpoint.
PT_FAULTS: list[tuple[str, Callable[[Path, dict], None], str]] = [
    ("legacy-format-cut", _legacy_cut, NOT_TORCH_SAVE),
    ("no-data.pkl", _rewritten(lambda n, d: None if n.endswith("/data.pkl") else d),
     NOT_TORCH_SAVE + "PytorchStreamReader failed locating file data.pkl"),
    ("no-storage", _rewritten(lambda n, d: None if n.endswith("/data/0") else d),
     NOT_TORCH_SAVE + "PytorchStreamReader failed locating file data/0"),
    ("short-storage", _rewritten(lambda n, d: d[: len(d) // 2] if n.endswith("/data/0") else d),
     NOT_TORCH_SAVE + "record size ("),
    ("garbled-pickle",
     _rewritten(lambda n, d: d[:10] + b"\xff" * 10 + d[20:] if n.endswith("/data.pkl") else d),
     NOT_TORCH_SAVE),
    ("no-version", _rewritten(lambda n, d: None if n.endswith("/version") else d),
     NOT_TORCH_SAVE + 'Expected hasRecord("version")'),
    ("future-version", _rewritten(lambda n, d: b"99\n" if n.endswith("/version") else d),
     NOT_TORCH_SAVE),
    ("an-npz-named-.pt", _npz_named_pt, NOT_TORCH_SAVE),
    ("gzipped", lambda path, t: path.write_bytes(gzip.compress(_save_bytes(t))), NOT_TORCH_SAVE),
    ("text", lambda path, _t: path.write_text("x,y\n1,2\n"), NOT_TORCH_SAVE),
    ("an-empty-zip", lambda path, _t: zipfile.ZipFile(path, "w").close(), NOT_TORCH_SAVE),
    ("a-pickled-class", _holding(lambda t: {**t, "extra": argparse.Namespace(a=1)}),
     REFUSED + "argparse.Namespace"),
    ("a-numpy-array", _holding(lambda t: {**t, "extra": np.zeros(3)}), REFUSED + "numpy"),
    ("a-list", _holding(lambda t: list(t.values())), "must hold a dict of tensors (got list)"),
    ("one-tensor", _holding(lambda t: next(iter(t.values()))),
     "must hold a dict of tensors (got Tensor)"),
    ("None", _holding(lambda _t: None), "must hold a dict of tensors (got NoneType)"),
    ("a-string-value", _holding(lambda t: {**t, "note": "hi"}), "note is a str, not a tensor"),
    ("a-nested-dict", _holding(lambda t: {"weights": t}), "weights is a dict, not a tensor"),
]  # fmt: skip


def _pt_cases() -> list:
    faults = [
        *[(name, write, words, ()) for name, write, words in PT_FAULTS],
        ("a-pickled-function", _holding(lambda t: {**t, "run": os.system}),
         "refused by torch.load(weights_only=True) "
         "(Trying to load unsupported GLOBAL posix.system", ()),
    ]  # fmt: skip
    cases = []
    for name, write, words, marks in faults:

        def data(tmp: Path, write=write) -> str:
            write(tmp / "d.pt", _good_arrays())
            return str(tmp / "d.pt")

        def weights(tmp: Path, write=write) -> str:
            write(tmp / "w.pt", _state())
            return str(tmp / "w.pt")

        cases += [
            pytest.param(_data(data), f"data: d.pt: {words}", id=f"data-{name}", marks=marks),
            pytest.param(
                _checkpoint(weights), f"checkpoint: w.pt: {words}", id=f"ckpt-{name}", marks=marks
            ),
        ]
    return cases


CASES = [
    *_tensor_cases(),
    *_pt_cases(),
    *_archive_cases(),
    *_claim_cases(),
    *_fault_cases(),
    *_path_cases(),
]


def test_the_table_covers_every_kind():
    assert len(CASES) >= 130


@pytest.mark.parametrize(("make", "expected"), CASES)
def test_a_bad_user_file_is_one_line_exit_2_and_writes_nothing(
    make, expected, tmp_path, monkeypatch, capsys
):
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    outputs.mkdir()
    monkeypatch.chdir(inputs)
    argv = make(inputs)
    before = snapshot(inputs)
    code = main([*argv, "--json", str(outputs / "r.json"), "--csv", str(outputs / "r.csv")])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert expected in err, err
    assert "Traceback" not in err and out == ""
    assert list(outputs.iterdir()) == []  # nothing written, not even a temporary file
    assert snapshot(inputs) == before


# ---- a document claiming more than 100% -----------------------------------------------------
@pytest.fixture(scope="module")
def trained_on_rows(tmp_path_factory) -> dict:
    """A real training-mode result on a data file (it has per-epoch accuracies)."""
    folder = tmp_path_factory.mktemp("trained")
    np.savez(folder / "d.npz", x=X, y=LABELS)
    path = folder / "r.json"
    argv = ["run", "--mode", "train", "--data", str(folder / "d.npz"), *FAST]
    assert main([*argv, "--widths", "6,4,3", "--json", str(path)]) == 0
    return json.loads(path.read_text())


ACCURACY_FIELDS = [
    ("train.accuracy.plain", 2.0),
    ("train.accuracy.autocast", 1.0000001),
    ("train.epochs.0.accuracy.plain", 2.0),
    ("train.epochs.0.accuracy.autocast", 100),
]


@pytest.mark.parametrize(("field", "value"), ACCURACY_FIELDS)
def test_compare_refuses_an_accuracy_over_one(trained_on_rows, tmp_path, capsys, field, value):
    doc = json.loads(json.dumps(trained_on_rows))
    *parents, last = field.split(".")
    node = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["compare", str(path)]) == 2
    out, err = capsys.readouterr()
    shown = field.replace(".0.", "[0].")
    assert err == f"error: {path}: result: {shown}: expected a number in 0 … 1\n"
    assert out == "" and snapshot(tmp_path) == before


# ---- the window's saves --------------------------------------------------------------------
@pytest.fixture(scope="module")
def sweep_text(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("sweep") / "s.json"
    argv = ["sweep", "--widths", "8,4", "--min-time", "0.01", "--values", "1,2", "--no-onednn"]
    assert main([*argv, "--threads", "1", "--json", str(path)]) == 0
    return path.read_text()


SAVES = [
    ("save_result", "r\x00.json", "a path cannot contain a NUL character"),
    ("save_result", "r.csv\x00", "a path cannot contain a NUL character"),
    ("save_result", "newdir/", "it ends in '/': it names a folder, not a file"),
    ("save_result", "adir/", "adir/: it is a folder"),
    ("save_sweep", "s\x00.json", "a path cannot contain a NUL character"),
    ("save_sweep", "s\x00.csv", "a path cannot contain a NUL character"),
    ("save_sweep", "newdir/", "it ends in '/': it names a folder, not a file"),
    ("write_file", "w\x00.bin", "a path cannot contain a NUL character"),
]


@pytest.mark.parametrize(("method", "name", "words"), SAVES)
def test_a_save_the_window_cannot_make_is_one_banner_line(
    qtbot, explorer_user_files, good_result, sweep_text, tmp_path, method, name, words
):
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.gui import MainWindow

    window = MainWindow(autoload=False)
    qtbot.addWidget(window)
    window.last_result = ExperimentResult.from_json(json.dumps(good_result))
    window.sweeps.sweeps.last_sweep = SweepResult.from_json(sweep_text)
    folder = tmp_path / "saves"
    folder.mkdir()
    (folder / "adir").mkdir()
    before = snapshot(folder)
    path = f"{folder}/{name}"
    if method == "write_file":
        saved = window.write_file(path, b"data", "the test data")
    else:
        saved = getattr(window, method)(path)
    assert saved is False
    banner = window.messageBanner.text()
    assert banner.startswith("Could not save ") and words in banner, banner
    assert "\n" not in banner and "\x00" not in banner
    assert snapshot(folder) == before
