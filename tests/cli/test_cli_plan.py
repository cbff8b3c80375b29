"""`autocast-explorer plan` and `plan --verify`: the document, the summary, the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.planning.document import PlanDocument
from autocast_explorer.core.planning.search import make_plan
from autocast_explorer.core.planning.verify import verify_plan
from autocast_explorer.core.runtime.progress import Cancelled

ROOT = Path(__file__).resolve().parents[2]
FAULT = "autocast_explorer.examples.planted_faults:float16_overflow"
TINY = ["--model", FAULT, "--dtype", "float16", "--min-time", "0.02", "--threads", "1"]


def test_plan_json_holds_the_plan_that_keeps_the_overflowing_layer(capsys, timing_noise):
    timing_noise.clear(2.0)
    args = ["plan", *TINY, "--routes", "eager", "--criterion", "agree>=99%", "--budget", "30"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "autocast-explorer/plan/1"
    assert data["outcome"] == "plan"
    assert data["chosen"]["keep_float32"] == ["amplify"]
    assert data["first_divergent"] == "amplify"
    assert [row["name"] for row in data["sensitivity"]] == ["embed", "amplify", "norm", "head"]
    assert all({"met", "why_not"} <= set(c) for c in data["candidates"])
    assert PlanDocument.from_json(json.dumps(data)).chosen.keep_float32 == ("amplify",)


def test_plan_prints_the_outcome_the_layers_and_the_code(capsys, timing_noise):
    timing_noise.clear(0.5)
    assert main(["plan", *TINY, "--routes", "eager", "--criterion", "agree>=99%"]) == 0
    out = capsys.readouterr().out
    assert "float32 is fastest here: eager float32, 1 thread" in out
    assert "First divergent layer: amplify" in out
    assert "\n  amplify " in out
    assert "output = run(x)" in out


def test_plan_keeps_the_user_s_layers_in_every_lower_candidate_and_adds_to_them(
    capsys, timing_noise
):
    """The user keeps `norm`; the answers agree only once `amplify` is kept too."""
    timing_noise.clear(2.0)
    args = ["plan", *TINY, "--routes", "eager,implicit", "--keep-float32", "norm"]
    args += ["--criterion", "agree>=99%", "--budget", "30", "--json", "-"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["keep_float32"] == ["norm"]
    assert data["outcome"] == "plan"
    assert data["chosen"]["keep_float32"] == ["norm", "amplify"]
    lowered = [c for c in data["candidates"] if c["dtype"] != "float32"]
    assert lowered and all(c["keep_float32"][0] == "norm" for c in lowered)
    implicit = [c for c in lowered if c["route"] == "implicit"]
    # How many implicit candidates (one, or also at other threads) follows this CPU's timings.
    assert implicit and all(c["keep_float32"] == ["norm"] for c in implicit)
    assert all(c["keep_float32"] == [] for c in data["candidates"] if c["dtype"] == "float32")
    norm = next(row for row in data["sensitivity"] if row["name"] == "norm")
    assert (norm["one_in"], norm["leave_out"]) == (100.0, 100.0)  # float32 in every candidate
    assert '    "norm",\n    "amplify",\n]:' in data["snippet"]
    assert "flipped" not in data["chosen"]  # synthetic data: no held-out examples


def test_a_keep_pattern_that_names_no_layer_exits_2_with_one_line(capsys):
    args = ["plan", *TINY, "--keep-float32", "amplfy", "--criterion", "agree>=99%"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: keep_float32: 'amplfy' matches no layer; nearest: ")
    assert captured.err.count("\n") == 1 and captured.out == ""


def test_on_real_data_the_chosen_plan_s_flipped_examples_are_counted(capsys, timing_noise):
    timing_noise.clear(2.0)
    args = ["plan", "--data", "digits", "--epochs", "2", "--min-time", "0.02", "--threads", "1"]
    args += ["--routes", "eager", "--criterion", "accuracy-drop<=5", "--budget", "30"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "plan" and data["chosen"]["dtype"] == "bfloat16"
    flipped = data["chosen"]["flipped"]
    assert flipped["held_out"] == 449  # the digits' held-out quarter
    assert 0 <= flipped["count"] <= 0.1 * 449  # a drop within 5 points flips few
    base = data["candidates"][0]
    assert (base["dtype"], base["flipped"]["count"]) == ("float32", 0)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"; {flipped['count']} of 449 held-out examples flipped" in out.splitlines()[1]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ([], "plan needs --criterion EXPR"),
        (["--criterion", "agree>99"], "expected one of accuracy-drop<=N, agree>=N, sqnr>=N"),
        (["--criterion", "accuracy-drop<=1"], "accuracy-drop needs real data"),
        (["--criterion", "sqnr>=30", "--budget", "0"], "budget: must be seconds above 0"),
        (["--criterion", "sqnr>=30", "--routes", "compiled"], "must include eager"),
        (["--verify", "no-such-plan.json"], "no-such-plan.json: no such file"),
        (["--verify", "x.json", "--criterion", "sqnr>=3"], "--verify takes the plan's own"),
    ],
)
def test_bad_input_exits_2_with_one_line(extra, words, capsys):
    assert main(["plan", *TINY, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err
    assert err.count("\n") == 1


def test_a_file_that_is_no_plan_is_refused_by_name(tmp_path, capsys):
    path = tmp_path / "result.json"
    path.write_text('{"schema": "autocast-explorer/result/1"}', encoding="utf-8")
    assert main(["plan", "--verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "result.json: plan:" in err and err.count("\n") == 1


@pytest.fixture(scope="module")
def float32_plan() -> PlanDocument:
    """A plan whose claims hold on any machine: float32 eager itself, chosen."""
    from autocast_explorer.testing.noise import TimingNoise

    config = ExperimentConfig(model=FAULT, dtype="float16", min_time=0.02, threads=1)
    with pytest.MonkeyPatch.context() as patch:
        TimingNoise(patch).clear(0.5)
        plan = make_plan(config, "agree>=99%", 30, routes=("eager",))
    assert (plan.outcome, plan.chosen.dtype, plan.chosen.threads) == ("float32", "float32", 1)
    return plan


def _verify_in_a_fresh_process(plan: PlanDocument, folder: Path) -> subprocess.CompletedProcess:
    path = folder / "plan.json"
    path.write_text(plan.to_json(), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "autocast_explorer", "plan", "--verify", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


@pytest.mark.process
def test_verify_in_a_fresh_process_holds_for_a_plan_that_holds(float32_plan, tmp_path):
    done = _verify_in_a_fresh_process(float32_plan, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("rebuilt ")
    assert "criterion agree>=99%: 100% now, 100% in the plan — met" in lines
    assert "speed: the plan is float32 eager itself, nothing to time" in lines
    assert lines[-1] == "verify: the plan holds"


@pytest.mark.process
def test_verify_fails_with_exit_1_when_the_criterion_no_longer_holds(float32_plan, tmp_path):
    chosen = float32_plan.chosen.model_copy(update={"dtype": "float16", "keep_float32": ()})
    claimed = float32_plan.model_copy(update={"outcome": "plan", "chosen": chosen})
    done = _verify_in_a_fresh_process(claimed, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "missed (the plan said otherwise)" in done.stdout
    assert done.stdout.splitlines()[-1] == "verify: the plan no longer holds"


@pytest.mark.process
def test_verify_plan_runs_the_check_in_a_fresh_process_and_can_be_cancelled(float32_plan):
    checked = verify_plan(float32_plan)
    assert checked.passed is True
    assert checked.lines[-1] == "verify: the plan holds"
    with pytest.raises(Cancelled):
        verify_plan(float32_plan, cancel=lambda: True)


def test_verify_applies_the_user_s_keep_set_with_the_plan_s(float32_plan, timing_noise):
    """A plan for a config that keeps `norm`, whose chosen candidate keeps `amplify` too."""
    from autocast_explorer.core.planning.document import PlanChoice
    from autocast_explorer.core.planning.verify import check_plan

    timing_noise.clear(2.0)
    config = float32_plan.config.replace(keep_float32=("norm",))
    chosen = PlanChoice(route="eager", dtype="float16", threads=1, keep_float32=("norm", "amplify"))
    plan = float32_plan.model_copy(update={"config": config, "outcome": "plan", "chosen": chosen})
    verification = check_plan(plan)
    assert "kept in float32: norm, amplify — float32; 2 other layers gave float16" in (
        verification.lines
    )
    assert "criterion agree>=99%: 100% now, not finite in the plan — met" in verification.lines
    assert verification.passed
