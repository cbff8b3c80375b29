"""The bundled digits, a user's arrays checked rule by rule, the seeded split, safetensors."""

import json
import struct

import numpy as np
import pytest

from autocast_explorer.core.data.dataset import (
    dataset_from_arrays,
    digits_path,
    load_dataset,
    load_digits,
    split,
)
from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.data.files import read_arrays, read_state_dict
from autocast_explorer.core.data.safetensors import (
    SafetensorsError,
    read_safetensors,
    write_safetensors,
)


def test_the_digits_ship_with_their_citation_and_licence():
    d = load_digits()
    assert d.x.shape == (1797, 1, 8, 8) and d.x.dtype == np.float32
    assert d.y.shape == (1797,) and sorted(set(d.y.tolist())) == list(range(10))
    assert d.x.min() == 0 and d.x.max() == 16 and d.scale == 16.0 and d.image
    # The first image is a 0 (the first row of the UCI file).
    assert d.y[0] == 0 and d.x[0, 0, 0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    citation = (digits_path().parent / "CITATION.md").read_text()
    assert "CC BY 4.0" in citation and "10.24432/C50P49" in citation
    assert "Alpaydin" in (digits_path().parent / "digits.rst").read_text()


def test_the_split_is_seeded_disjoint_and_a_quarter_held_out():
    d = load_digits()
    a, b = split(d, 0), split(d, 0)
    assert np.array_equal(a.test, b.test) and np.array_equal(a.train, b.train)
    assert len(a.test) == 449 and len(a.train) == 1348
    assert not set(a.test.tolist()) & set(a.train.tolist())
    assert not np.array_equal(split(d, 1).test, a.test)


def _arrays(**changes):
    rng = np.random.default_rng(0)
    arrays = {"x": rng.normal(size=(20, 6)).astype(np.float32), "y": np.arange(20) % 3}
    arrays.update(changes)
    return {k: v for k, v in arrays.items() if v is not None}


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"x": None}, "has no array 'x' (found: y)"),
        ({"y": None}, "has no array 'y' (found: x)"),
        ({"y": np.arange(19) % 3}, "x has 20 rows but y has 19: lengths differ"),
        (
            {"x": np.where(np.eye(20, 6) > 0, np.nan, 0.0)},
            "x: 6 rows hold NaN or inf (first: row 0)",
        ),
        ({"x": np.full((20, 6), np.inf)}, "x: 20 rows hold NaN or inf"),
        ({"y": np.array([0] * 19 + [-1])}, "y: labels must be in 0…0 (row 19 holds -1)"),
        ({"y": np.array([0.5] * 20)}, "y: labels must be whole numbers (row 0 holds 0.5)"),
        (
            {"y": np.arange(20) % 3, "classes": np.array(2)},
            "y: labels must be in 0…1 (row 2 holds 2)",
        ),
        ({"x": np.zeros(20)}, "x: must be (rows, features…), got shape (20,)"),
        ({"y": np.zeros((20, 2))}, "y: must be one label per row (1-D)"),
        ({"x": np.array(["a"] * 20)}, "x: must hold numbers"),
        ({"x": np.zeros((20, 0))}, "x: each row must hold at least one value (got shape (20, 0))"),
        ({"x": np.zeros((20, 4, 0))}, "x: each row must hold at least one value"),
        (
            {"y": np.zeros(20, np.int64)},
            "y: every row has label 0: held-out accuracy needs at least 2 classes",
        ),
        ({"y": np.full(20, 2), "classes": np.array(3)}, "y: every row has label 2: held-out"),
    ],
)
def test_every_bad_array_is_one_line_naming_it_and_the_rule(changes, words):
    with pytest.raises(DataError) as caught:
        dataset_from_arrays("mine.npz", _arrays(**changes))
    message = str(caught.value)
    assert message.startswith("data: ") and words in message and "\n" not in message


def test_images_of_one_channel_get_a_channel_axis_and_classes_come_from_the_labels():
    d = dataset_from_arrays("m", {"x": np.zeros((4, 5, 5)), "y": np.array([0, 3, 1, 2])})
    assert d.x.shape == (4, 1, 5, 5) and d.image and d.classes == 4
    flat = dataset_from_arrays("m", {"x": np.zeros((4, 7)), "y": np.array([0, 1, 1, 0])})
    assert not flat.image and flat.features == 7 and flat.classes == 2


@pytest.mark.parametrize("suffix", [".npz", ".safetensors", ".pt"])
def test_every_data_format_reads_the_same_arrays(tmp_path, suffix):
    import torch

    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    y = np.array([0, 1, 2, 1])
    path = tmp_path / f"d{suffix}"
    if suffix == ".npz":
        np.savez(path, x=x, y=y)
    elif suffix == ".safetensors":
        write_safetensors(path, {"x": x, "y": y})
    else:
        torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y)}, path)
    d = load_dataset(str(path))
    assert np.array_equal(d.x, x) and d.y.tolist() == [0, 1, 2, 1] and d.name == path.name


def test_a_pickled_object_in_a_pt_file_is_refused_not_run(tmp_path):
    import torch

    path = tmp_path / "evil.pt"
    torch.save({"x": torch.zeros(2, 2), "y": torch.zeros(2), "obj": ValueError("boom")}, path)
    with pytest.raises(DataError, match=r"data: evil.pt: refused by torch.load\(weights_only"):
        read_arrays(path, "data")


def test_an_npz_holding_objects_is_refused(tmp_path):
    path = tmp_path / "o.npz"
    np.savez(path, x=np.array([{"a": 1}], dtype=object), y=np.zeros(1))
    with pytest.raises(DataError, match=r"data: o.npz: cannot be read \(.*pickle"):
        read_arrays(path, "data")


def test_safetensors_round_trip_and_bfloat16_widened_exactly(tmp_path):
    path = tmp_path / "t.safetensors"
    write_safetensors(path, {"a": np.arange(6, dtype=np.int64).reshape(2, 3)})
    assert read_safetensors(path)["a"].tolist() == [[0, 1, 2], [3, 4, 5]]
    # A BF16 tensor written by hand: 1.0 is 0x3F80, -2.5 is 0xC020.
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + struct.pack("<2H", 0x3F80, 0xC020))
    assert read_safetensors(path)["w"].tolist() == [1.0, -2.5]


@pytest.mark.parametrize(
    ("blob", "words"),
    [
        (b"abc", "shorter than the 8-byte header"),
        (struct.pack("<Q", 999) + b"{}", "header length 999 is beyond the file"),
        (struct.pack("<Q", 3) + b"{x}", "the header is not JSON"),
        (
            struct.pack("<Q", 58) + b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}    ',
            "w: data_offsets must be [start, end] inside the file",
        ),
    ],
)
def test_broken_safetensors_are_refused_naming_the_rule(tmp_path, blob, words):
    path = tmp_path / "b.safetensors"
    path.write_bytes(blob)
    with pytest.raises(SafetensorsError, match=words.replace("[", r"\[").replace("]", r"\]")):
        read_safetensors(path)


def _pt(path, **tensors):
    import warnings

    import torch

    with warnings.catch_warnings():  # making a quantized tensor warns that it is deprecated
        warnings.simplefilter("ignore")
        torch.save({k: make() for k, make in tensors.items()}, path)
    return path


def _float8():
    import torch

    return torch.zeros(4, 6).to(torch.float8_e4m3fn)


def _sparse():
    import torch

    return torch.eye(4, 6).to_sparse()


def _quantized():
    import torch

    return torch.quantize_per_tensor(torch.zeros(4, 6), 0.1, 0, torch.qint8)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (
            _float8,
            "x is float8_e4m3fn: only bool, integer, float16/32/64 and bfloat16 tensors are read",
        ),
        (_sparse, "x is a sparse_coo tensor: only dense tensors are read (save tensor.to_dense())"),
        (
            _quantized,
            "x is quantized (qint8): only plain tensors are read (save tensor.dequantize())",
        ),
    ],
)
def test_a_pt_tensor_no_array_can_be_made_of_is_refused_naming_it(tmp_path, make, words):
    import torch

    path = _pt(tmp_path / "d.pt", x=make, y=lambda: torch.arange(4) % 2)
    with pytest.raises(DataError) as caught:
        read_arrays(path, "data")
    assert str(caught.value) == f"data: d.pt: {words}"
    weights = _pt(tmp_path / "w.pt", **{"fc1.weight": make})
    with pytest.raises(DataError, match=r"^checkpoint: w\.pt: fc1\.weight is "):
        read_state_dict(weights)


@pytest.mark.parametrize(
    ("keep", "words"),
    [
        (0, "the file is empty (0 bytes)"),
        (2, "truncated or not a torch.save file ("),
        (200, "truncated or not a torch.save file (PytorchStreamReader failed reading zip"),
        (-1, "failed finding central directory"),
    ],
)
def test_an_empty_or_truncated_pt_is_one_line(tmp_path, keep, words):
    import torch

    whole = _pt(tmp_path / "whole.pt", x=lambda: torch.zeros(4, 6), y=lambda: torch.arange(4))
    cut = tmp_path / "cut.pt"
    cut.write_bytes(whole.read_bytes()[:keep])
    for field_name, read in (("data", lambda p: read_arrays(p, "data")), ("checkpoint", None)):
        with pytest.raises(DataError) as caught:
            read(cut) if read else read_state_dict(cut)
        message = str(caught.value)
        assert message.startswith(f"{field_name}: cut.pt: ") and words in message
        assert "\n" not in message and len(message) < 200


def test_an_npz_header_claiming_more_than_the_file_holds_is_refused_unread(tmp_path):
    import io
    import zipfile

    header = io.BytesIO()
    claim = {"descr": "<f4", "fortran_order": False, "shape": (10**10, 6)}
    np.lib.format.write_array_header_1_0(header, claim)
    with zipfile.ZipFile(tmp_path / "big.npz", "w") as archive:
        archive.writestr("x.npy", header.getvalue() + bytes(96))
    with pytest.raises(DataError) as caught:
        read_arrays(tmp_path / "big.npz", "data")
    assert str(caught.value) == (
        "data: big.npz: x claims shape (10000000000, 6) of float32 (228,882 MB) but the file "
        "holds 96 bytes of it: truncated or corrupt"
    )


def test_arrays_over_the_memory_budget_are_refused_before_they_are_read(tmp_path):
    rows = 2**18
    path = tmp_path / "zeros.npz"
    np.savez_compressed(path, x=np.zeros((rows, 8), np.float32), y=np.arange(rows) % 2)
    assert path.stat().st_size < 2**20  # compressed: what the headers claim decides
    with pytest.raises(DataError) as caught:
        load_dataset(str(path), budget_bytes=2**20)
    assert str(caught.value) == (
        "data: zeros.npz: its arrays take 10 MB, more than the memory budget of 1 MB"
    )
    assert load_dataset(str(path), budget_bytes=64 * 2**20).rows == rows


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("folder", "is a folder, not a file"),
        ("fifo", "is a FIFO (a named pipe), not a file"),
        ("loop", "is a symbolic link loop"),
    ],
)
def test_a_folder_fifo_or_link_loop_is_named_not_called_missing(tmp_path, kind, words):
    import os

    path = tmp_path / "d.npz"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(path.name)
    with pytest.raises(DataError) as caught:
        read_arrays(path, "data")
    assert str(caught.value) == f"data: {path}: {words}"
