"""One class per document part: what the program builds is validated, what a file holds is read
leniently, and the keys a part writes are the ones its file always had."""

from __future__ import annotations

import math

import pytest

from autocast_explorer.core.documents.field_types import Omittable, Whole
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.documents.reader import DocumentFormatError
from autocast_explorer.core.hardware.cpu import Environment
from autocast_explorer.core.learning.presets import SCHEMA as PRESET_SCHEMA
from autocast_explorer.core.learning.presets import PresetError, preset_from_dict
from autocast_explorer.core.numerics.layer_error import LayerError
from autocast_explorer.core.numerics.opresult import OpPolicy
from autocast_explorer.core.numerics.optrace import CastSummary, OpRecord, OpTrace


class _Counted(Part):
    count: Omittable[Whole] = None


def test_a_misspelt_keyword_is_a_type_error_but_a_newer_files_key_is_ignored():
    with pytest.raises(TypeError, match="Environment has no field 'cpu_modle'"):
        Environment(cpu_modle="EPYC")
    env = Environment.from_dict({"cpu_model": "EPYC", "from_a_newer_version": 1})
    assert env.cpu_model == "EPYC" and "from_a_newer_version" not in env.to_dict()


def test_an_omittable_none_is_left_out_but_null_in_a_file_is_refused():
    assert dump(_Counted(count=None)) == {} and dump(_Counted(count=3)) == {"count": 3}
    with pytest.raises(DocumentFormatError, match="count: expected a whole number ≥ 0"):
        read(_Counted, {"count": None}, "counted")


@pytest.mark.parametrize(
    ("data", "sqnr_db", "mean_rel", "mean_abs"),
    [
        ({"identical": True, "sqnr_db": None}, math.inf, math.inf, 0.0),
        ({"nonfinite": 3, "sqnr_db": None, "mean_abs": None}, math.nan, math.nan, math.inf),
        ({"sqnr_db": None}, -math.inf, math.inf, 0.0),  # all-zero reference
        ({"sqnr_db": 12.5, "mean_rel": 0.25}, 12.5, 0.25, 0.0),
    ],
)
def test_a_layer_errors_nulls_read_back_as_what_the_other_fields_imply(
    data, sqnr_db, mean_rel, mean_abs
):
    error = LayerError.from_dict(data)
    for got, wanted in ((error.sqnr_db, sqnr_db), (error.mean_rel, mean_rel)):
        assert got == wanted or (math.isnan(got) and math.isnan(wanted))
    assert error.mean_abs == mean_abs or (math.isnan(mean_abs) and math.isnan(error.mean_abs))
    assert error.max_abs == math.inf  # absent: not finite
    assert dump(error)["sqnr_db"] == (sqnr_db if math.isfinite(sqnr_db) else None)


def test_op_records_keep_the_tracers_label_but_a_results_ops_are_plain_or_autocast():
    record = OpRecord(
        mode="low", op="aten.add.Tensor", in_dtypes=("bfloat16",), out_dtypes=("bfloat16",),
        shape=(2,), cast=False, source="", module="",
    )  # fmt: skip
    assert record.mode == "low"
    assert list(record.to_dict()) == ["mode", "op", "in", "out", "shape", "cast"]  # '' left out
    data = {"ops": [{**record.to_dict(), "mode": "plain"}], "casts": {"count": 0, "bytes": 0}}
    assert OpTrace.from_dict(data).plain[0].op == "aten.add.Tensor"
    data["ops"][0]["mode"] = "low"
    refused = r"ops\[0\]\.mode: expected 'plain' or 'autocast'"
    with pytest.raises(DocumentFormatError, match=refused):
        OpTrace.from_dict(data)


def test_an_op_trace_writes_its_grad_mode_once_and_compares_without_its_layer_outputs():
    casts = CastSummary(count=2, bytes=8, by_op={"aten._to_copy.default": 2})
    trace = OpTrace(
        ops=(),
        casts=casts.model_copy(update={"grad_mode": "inference_mode"}),
        casts_by_grad_mode={"inference_mode": casts},
        layer_outputs={"autocast": {"fc1": "bfloat16"}},
    )
    data = trace.to_dict()
    assert data["casts"]["grad_mode"] == "inference_mode"
    assert "grad_mode" not in data["casts_by_grad_mode"]["inference_mode"]
    assert "by_kind" not in data["casts"] and "layer_outputs" not in data
    again = OpTrace.from_dict(data)
    assert again == trace and again.layer_outputs == {} and again.grad_mode == "inference_mode"


def test_a_probes_cases_are_named_by_their_keys_in_order():
    op = OpPolicy.from_dict(
        {
            "name": "linear",
            "policy": "lower",
            "cases": {
                "low": {"in": ["bfloat16"], "out": "bfloat16"},
                "float32": {"in": ["float32"]},
            },
        }
    )
    assert [(c.case, c.out_dtype) for c in op.cases] == [("low", "bfloat16"), ("float32", None)]
    assert op.category == "matmul-conv"  # older files: from the catalog
    assert list(op.to_dict()["cases"]) == ["low", "float32"]
    assert "case" not in op.to_dict()["cases"]["low"]


def test_where_a_preset_lives_is_not_in_its_file():
    data = {"schema": PRESET_SCHEMA, "name": "Mine", "description": "A test.", "config": {}}
    preset = preset_from_dict(data, preset_id="mine", builtin=True)
    assert (preset.id, preset.path, preset.builtin) == ("mine", None, True)
    assert preset.to_dict() == {**data, "config": preset.config.to_dict()}
    assert preset != preset.located("other")
    with pytest.raises(PresetError, match="unknown key 'id'"):
        preset_from_dict({**data, "id": "mine"})
