"""The hardware verdict sentence (flags + measurements) and oneDNN's verbose log."""

import os

import pytest
import torch

from autocast_explorer.core.experiment import onednn_probe
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.guards import GuardError
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.hardware import onednn
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.runtime.progress import Cancelled
from autocast_explorer.core.sweeps.verdict import hardware_verdict, measured_clause


def env_with(*flags, bf16=None, fp16=None):
    return environment(2).model_copy(
        update={
            "cpu_flags": tuple(flags),
            "torch_bf16_supported": bf16,
            "torch_fp16_supported": fp16,
        }
    )


def test_no_native_bf16_and_slower_everywhere():
    v = hardware_verdict(env_with("avx2", "fma"), "bfloat16", "batch", [1, 64, 4096], [0.22] * 3)
    assert (
        v.sentence
        == "No native bfloat16 on this CPU: autocast ran 4.5× slower at every size tried."
    )
    assert v.native is False
    assert v.flags == {
        "avx512_bf16": False,
        "amx_bf16": False,
        "amx_tile": False,
        "avx512_fp16": False,
        "amx_fp16": False,
    }


def test_range_of_slowdowns_and_emulation_note():
    v = hardware_verdict(
        env_with("avx512f", bf16=True), "bfloat16", "width", [64, 4096], [0.25, 0.2]
    )
    assert v.sentence == (
        "No native bfloat16 on this CPU (torch's oneDNN reports it supported: emulated): "
        "autocast ran 4–5× slower at every size tried."
    )


def test_native_bf16_with_a_crossing():
    v = hardware_verdict(
        env_with("avx512f", "avx512_bf16"), "bfloat16", "batch", [16, 64, 256], [0.5, 1.0, 2.0]
    )
    assert v.sentence == (
        "avx512_bf16 present: autocast wins above batch 64 (up to 2.00× faster at batch 256)."
    )
    assert v.flags["avx512_bf16"] is True and v.native is True


def test_amx_and_winning_everywhere():
    v = hardware_verdict(
        env_with("amx_bf16", "amx_tile", "avx512_bf16"), "bfloat16", "batch", [8, 64], [1.3, 2.6]
    )
    assert v.sentence == "AMX (amx_bf16) present: autocast ran 1.3–2.6× faster at every size tried."
    assert v.flags["amx_tile"] is True


def test_native_but_slower_says_why():
    v = hardware_verdict(env_with("avx512_bf16"), "bfloat16", "batch", [1, 8], [0.3, 0.5])
    assert v.sentence.endswith(
        "slower at every size tried "
        "(the casts cost more than native bfloat16 saves at these sizes)."
    )


def test_float16_flags():
    assert hardware_verdict(env_with("avx512_bf16"), "float16", "batch", [1], [0.16]).sentence == (
        "No native float16 on this CPU: autocast ran 6.2× slower at batch 1."
    )
    v = hardware_verdict(env_with("avx512_fp16"), "float16", "batch", [1, 2], [1.2, 1.2])
    assert v.hardware == "avx512_fp16 present"


def test_measured_clause_variants():
    assert measured_clause("batch", [1, 2, 4, 8], [0.96, 1.04, 0.97, 1.03]).endswith(
        "crossed 1.0 3 times: about even, within noise"
    )
    downward = measured_clause("width", [64, 4096], [1.5, 0.5])
    assert downward == (
        "autocast wins below width 512 and loses above it (down to 2.00× slower at width 4096)"
    )
    several = measured_clause("batch", [1, 2, 4, 8, 16], [0.5, 2.0, 0.5, 0.5, 2.0])
    assert several.startswith("the speedup crosses 1.0 at batch 1.3, 3.2, 10; autocast wins above")
    assert measured_clause("batch", [1], [float("nan")]) == "nothing was measured"


def test_verdict_round_trips_through_json():
    v = hardware_verdict(env_with("avx512_bf16"), "bfloat16", "batch", [16, 256], [0.5, 2.0])
    assert type(v).from_dict(v.to_dict()) == v


# ---- oneDNN verbose -----------------------------------------------------------------------
VERBOSE = """\
onednn_verbose,v1,info,oneDNN v3.12.0 (commit 80afa71049cd69a3df32adcccb623b12cd7baa22)
onednn_verbose,v1,info,cpu,isa:Intel AVX-512 with Intel DL Boost and bfloat16 support
onednn_verbose,v1,primitive,info,template:operation,engine,primitive,implementation,prop_kind
onednn_verbose,v1,primitive,exec,cpu,matmul,brg_matmul:avx512_core_bf16,undef,src:bf16::blocked:ab::f0 wei:bf16::blocked:ba::f0 dst:bf16::blocked:ab::f0,attr-scratchpad:user attr-post-ops:sum,,128x256:256x256,0.09
onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:ab::f0 dst:bf16::blocked:ab::f0,,,128x256,0.01
onednn_verbose,v1,primitive,exec,cpu,matmul,brg_matmul:avx512_core_amx,undef,src:bf16::blocked:ab::f0 wei:bf16::blocked:ba::f0 dst:bf16::blocked:ab::f0,,,128x256:256x10,0.01
"""  # noqa: E501


def test_parse_verbose_lines():
    kernels, isa = onednn.parse_verbose(VERBOSE)
    assert isa == "Intel AVX-512 with Intel DL Boost and bfloat16 support"
    assert [k.implementation for k in kernels] == [
        "brg_matmul:avx512_core_bf16",
        "jit:uni",
        "brg_matmul:avx512_core_amx",
    ]
    assert kernels[0].isa == "avx512_core_bf16"
    assert kernels[0].src_dtype == "bfloat16" and kernels[1].src_dtype == "float32"
    assert kernels[0].problem == "128x256:256x256"
    text = onednn.summarize("bfloat16", kernels, [], isa)
    assert text.startswith(
        "The bfloat16 GEMMs ran in oneDNN as "
        "brg_matmul:avx512_core_bf16, brg_matmul:avx512_core_amx"
    )
    assert "float32 GEMMs did not go through oneDNN" in text
    assert onednn.summarize("float16", [], [], None).startswith(
        "oneDNN reported no GEMM for the float16 forward"
    )


def test_capture_fd1_catches_what_cpp_would_print(capfd):
    text = onednn.capture_fd1(lambda: os.write(1, b"from the C side\n"))
    assert text == "from the C side\n"
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "after\n"  # fd 1 is restored


def test_probe_reports_the_kernels_of_this_machine():
    model, x = build(ExperimentConfig(widths=(64, 32, 8), batch=16))
    probe = onednn.probe(model, x, torch.bfloat16)
    assert probe.available == torch.backends.mkldnn.is_available()
    assert probe.captured
    flags = set(environment().cpu_flags)
    if "avx512_bf16" in flags or "amx_bf16" in flags:
        # Native bf16: oneDNN runs the GEMMs and names a bf16-capable kernel.
        assert probe.determined
        assert any("bf16" in k.isa or "amx" in k.isa for k in probe.autocast_kernels)
        assert probe.autocast_kernels[0].implementation in probe.summary
    elif not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        # No bf16 path in oneDNN at all (AVX2 hosts): torch's own kernels run the GEMMs.
        assert not any(k.primitive in ("matmul", "inner_product") for k in probe.autocast_kernels)
        assert "oneDNN reported no GEMM for the bfloat16 forward" in probe.summary
    else:
        assert probe.summary  # oneDNN emulates bf16 (AVX-512 without avx512_bf16)
    assert type(probe).from_dict(probe.to_dict()) == probe


def test_probe_config_guards_builds_and_stops_when_asked():
    config = ExperimentConfig(widths=(64, 32, 8), batch=16, dtype="float16", threads=1)
    with pytest.raises(GuardError) as info:
        onednn_probe.probe_config(config.replace(widths=(4096, 4096, 10), memory_budget_mb=1))
    assert info.value.field == "memory"
    asked: list[str] = []
    with pytest.raises(Cancelled):
        onednn_probe.probe_config(
            config, progress=lambda _f, m: asked.append(m), cancel=lambda: True
        )
    assert asked == ["checking the memory and time guards"]  # stopped before building
    threads = torch.get_num_threads()
    probe = onednn_probe.probe_config(config, progress=lambda _f, m: asked.append(m))
    assert probe.dtype == "float16"
    assert probe.captured == torch.backends.mkldnn.is_available()
    assert torch.get_num_threads() == threads  # the config's thread count was set back


@pytest.mark.parametrize("dtype", [torch.float16])
def test_probe_says_when_it_cannot_tell(dtype):
    model, x = build(ExperimentConfig(widths=(64, 32, 8), batch=16))
    probe = onednn.probe(model, x, dtype)
    assert probe.captured
    if not probe.autocast_kernels:
        assert "could not be determined" in probe.summary
        assert not probe.determined
    else:
        assert probe.autocast_kernels[0].implementation in probe.summary


def test_a_caveat_ends_the_sentence():
    v = hardware_verdict(
        env_with("avx2"), "bfloat16", "batch", [1, 8], [0.2, 0.25], caveat="2 of 2 points noisy"
    )
    assert v.sentence == (
        "No native bfloat16 on this CPU: autocast ran 4–5× slower at every size tried"
        " — 2 of 2 points noisy."
    )


def test_flags_only_and_single_run_verdicts():
    from autocast_explorer.core.sweeps.verdict import flags_verdict, single_run_verdict

    env = env_with("avx512f", "avx512_bf16")
    v = flags_verdict(env, "bfloat16")
    assert v.sentence == (
        "avx512_bf16 present: nothing measured yet; whether autocast pays depends on the "
        "sizes, so measure a run or a sweep."
    )
    assert v.native is True and v.flags["avx512_bf16"] is True
    one = single_run_verdict(env_with("avx2"), "bfloat16", 128, 0.5)
    assert one.sentence == (
        "No native bfloat16 on this CPU: in a single run, autocast ran 2× slower at batch "
        "128 — one size only; a sweep shows where the speedup crosses 1.0."
    )
