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
        ("sweep", "eager,implicit", "sweeps measure eager autocast only"),
    ],
)
def test_bad_routes_exit_2_with_one_line(command, routes, message, capsys):
    assert main([command, *TINY, "--routes", routes]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
