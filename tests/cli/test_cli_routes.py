"""`run --routes`: the implicit route end to end (compiling is tested in tests/core)."""

import json

import pytest

from autocast_explorer.cli import main

TINY = ["--widths", "32,16,4", "--batch", "8", "--min-time", "0.02"]


def test_run_routes_writes_every_route_to_the_json(capsys):
    assert main(["run", *TINY, "--routes", "implicit,eager", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["routes"] == ["eager", "implicit"]
    eager, implicit = data["routes"]
    assert (eager["name"], implicit["name"]) == ("eager", "implicit")
    assert eager["lower"]["median_ms"] == data["latency"]["autocast"]["median_ms"]
    assert implicit["output_dtype"] == {"plain": "float32", "lower": "float32"}
    assert implicit["error"]["identical"] == (not implicit["kernels"])


def test_run_routes_summary_has_a_row_per_route(capsys):
    assert main(["run", *TINY, "--routes", "eager,implicit"]) == 0
    out = capsys.readouterr().out
    rows = [
        line.split()[0] for line in out.splitlines() if line.startswith(("  eager ", "  implicit "))
    ]
    assert rows == ["eager", "implicit"]
    assert "    implicit: " in out


def test_without_routes_the_json_is_as_before(capsys):
    assert main(["run", *TINY, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "routes" not in data and "routes" not in data["config"]


@pytest.mark.parametrize(
    ("command", "routes", "message"),
    [
        ("run", "compiled", "must include eager"),
        ("run", "eager,fast", "must be some of eager, compiled, implicit (got 'fast')"),
        ("sweep", "implicit", "must include eager"),
    ],
)
def test_bad_routes_exit_2_with_one_line(command, routes, message, capsys):
    assert main([command, *TINY, "--routes", routes]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_sweep_routes_compare_routes_over_batch(capsys):
    """Each point carries its routes; the JSON reloads and each row names them."""
    from autocast_explorer.core.sweeps.result import SweepResult

    args = ["sweep", *TINY, "--values", "2,8", "--no-onednn", "--routes", "eager,implicit"]
    assert main([*args, "--json", "-"]) == 0
    text = capsys.readouterr().out
    data = json.loads(text)
    assert data["config"]["routes"] == ["eager", "implicit"]
    for point in data["points"]:
        (route,) = point["routes"]
        assert route["name"] == "implicit"
        assert route["output_dtype"] == {"plain": "float32", "lower": "float32"}
        assert route["agreement"]["rows"] == point["batch"]
    again = SweepResult.from_json(text)
    assert [p.routes[0].name for p in again.points] == ["implicit", "implicit"]
    assert main(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "  implicit " in line]
    assert len(rows) == 2
