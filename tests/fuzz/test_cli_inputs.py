"""Bad command-line input, table-driven: every case exits 2 with one `error:` line naming the
problem, prints nothing on stdout, shows no traceback and touches no file.

The CLI runs in-process: each case is refused before any torch work, so the table stays fast.
Paths in a case use `{tmp}`, a fresh folder holding `afile` (a file), `adir/` (an empty folder)
and `mine/` (a folder of someone's files), all of which must be left exactly as they were.
"""

from __future__ import annotations

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.runtime.threads import max_threads
from tests.fuzz.conftest import snapshot

FAST = ["--min-time", "0.01", "--widths", "8,4", "--batch", "2"]
TOO_MANY_THREADS = str(max_threads() + 1)

#: (flag, value, what the one error line must contain), for every command with experiment flags.
CONFIG_CASES: list[tuple[str, str, str]] = [
    *[
        ("--atol", v, "atol: must be a number in 0 …")
        for v in ("inf", "-inf", "nan", "1e309", "-1", "1e7")
    ],
    *[
        ("--rtol", v, "rtol: must be a number in 0 …")
        for v in ("inf", "1e309", "nan", "-0.5", "1e9")
    ],
    ("--atol", "abc", "invalid float value"),
    ("--atol", "", "invalid float value"),
    *[
        ("--input-scale", v, "input_scale: must be a number in 1e-6 … 1e6")
        for v in ("0", "-1", "inf", "nan", "1e7", "1e-9")
    ],
    *[
        ("--min-time", v, "min_time: must be a number of seconds in 0.001 … 600")
        for v in ("0", "-1", "nan", "inf", "601", "1e309")
    ],
    ("--min-time", "soon", "invalid float value"),
    *[
        ("--threads", v, "threads: must be an integer in 1 …")
        for v in ("0", "-1", "100000", TOO_MANY_THREADS)
    ],
    *[("--threads", v, "invalid int value") for v in ("2.5", "x", "1e3")],
    *[("--batch", v, "batch: must be an integer ≥ 1") for v in ("0", "-1")],
    *[("--batch", v, "invalid int value") for v in ("1.5", "x", "1e3", "")],
    *[("--seed", v, "seed: must be an integer in 0 … 2**63-1") for v in ("-1", str(2**63))],
    ("--seed", "1.5", "invalid int value"),
    *[("--topk", v, "topk: must be an integer ≥ 1") for v in ("0", "-3")],
    ("--widths", "", "widths: enter at least 2"),
    ("--widths", "5", "widths: needs at least 2 entries"),
    ("--widths", "-5,10", "widths: entry 1 (-5) must be a positive integer"),
    ("--widths", "a,b", "'a' is not a whole number"),
    ("--widths", "1,,2", "empty entry"),
    ("--widths", "0,2", "entry 1 (0) must be a positive integer"),
    ("--widths", "1.5,2", "'1.5' is not a whole number"),
    ("--widths", f"{2**21},2", "must be at most"),
    ("--widths", ",".join(["2"] * 70), "at most 65 entries"),
    ("--widths", "8,\x1b[2J4", "is not a whole number"),
    ("--dtype", "float64", "invalid choice"),
    ("--activation", "swish", "invalid choice"),
    ("--head", "sigmoid", "invalid choice"),
    ("--input-distribution", "cauchy", "invalid choice"),
]

#: Output paths: refused before measuring, whatever the command.
OUTPUT_CASES: list[tuple[str, str, str]] = [
    ("--json", "", "--json: empty file path"),
    ("--csv", "", "--csv: empty file path"),
    ("--json", " ", "--json: empty file path"),
    ("--json", "{tmp}/adir", "it is a folder"),
    ("--csv", "{tmp}/adir", "it is a folder"),
    ("--json", "{tmp}/missing/r.json", "the folder {tmp}/missing does not exist"),
    ("--csv", "{tmp}/missing/deeper/r.csv", "does not exist"),
    ("--json", "{tmp}/afile/r.json", "is not a folder"),
    ("--csv", "{tmp}/afile/r.csv", "is not a folder"),
    ("--json", "{tmp}/", "it is a folder"),
    ("--json", "{tmp}/newdir/", "cannot write {tmp}/newdir/: it ends in '/': it names a folder"),
    ("--csv", "{tmp}/newdir/", "it ends in '/': it names a folder, not a file"),
    ("--json", "newdir/", "cannot write newdir/: it ends in '/'"),
]
REPORT_CASES: list[tuple[str, str, str]] = [
    ("--report", "", "--report: empty folder path"),
    ("--report", "{tmp}/afile", "a file of that name exists"),
    ("--report", "{tmp}/mine", "holds files that are not a report's (notes.txt)"),
    ("--report", "{tmp}/missing/report", "the folder {tmp}/missing does not exist"),
    ("--report", "{tmp}/afile/report", "is not a folder"),
]

SWEEP_CASES: list[tuple[list[str], str]] = [
    (["--values", ""], "values"),
    (["--values", "0"], "values"),
    (["--values", "1,a"], "values"),
    (["--values", "5:1:3"], "values"),
    (["--values", "1:2:0"], "values"),
    (["--values", "1:nan:3"], "values"),
    (["--values", "-5,10"], "values"),
    (["--param", "depth"], "invalid choice"),
    (["--width-values", "8,16"], "--width-values is for a grid"),
    (["--param", "batch,width", "--width-values", "x"], "width_values"),
    (["--bogus"], "unrecognized arguments: --bogus"),
]

OPS_CASES: list[tuple[list[str], str]] = [
    (["--threads", "0"], "threads: must be an integer in 1 …"),
    (["--threads", "100000"], "threads: must be an integer in 1 …"),
    (["--threads", "x"], "invalid int value"),
    (["--dtype", "float64"], "invalid choice"),
    (["--json", ""], "--json: empty file path"),
    (["--json", "{tmp}/adir"], "it is a folder"),
    (["--json", "{tmp}/missing/p.json"], "does not exist"),
    (["--json", "{tmp}/newdir/"], "it ends in '/': it names a folder, not a file"),
]

OTHER_CASES: list[tuple[list[str], str]] = [
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "--reset-settings"], "unrecognized arguments: --reset-settings"),
    (["--reset-settings", "run"], "--reset-settings takes no command"),
    (["compare"], "the following arguments are required: RESULT.json"),
    (["compare", ""], "is not a file"),
    (["compare", "{tmp}/missing.json"], "no such file"),
    (["compare", "{tmp}/adir"], "is not a file"),
    (["compare", "{tmp}/afile"], "not valid JSON"),
    (["run", "--widths"], "expected one argument"),
    (["run", "--placements=yes"], "ignored explicit argument"),
    (["run", "--model", "cnn", "--channels", "3,65537"], "must be a whole number in 1 … 65536"),
    (["run", "--model", "cnn", "--channels", "3,0"], "must be a whole number in 1 … 65536"),
    (["sweep", "--mode", "train"], "unrecognized arguments: --mode train"),
    (["run", "--preset", "/dev/zero"], "is a device or socket, not a file"),
    (["run", "--preset", "{tmp}/adir/p.json"], "no such file"),
]


def _abbreviations() -> list[tuple[list[str], str]]:
    """Every long flag of every command, less its last letter: never read as the flag."""
    from autocast_explorer.cli import build_parser

    top = build_parser()
    sub = next(a for a in top._actions if a.dest == "command")
    cases = []
    for command, parser in sub.choices.items():
        flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        for flag in sorted(flags):
            short = flag[:-1]
            if len(short) > 3 and short not in flags:
                value = ["x.json"] if command == "compare" else ["1"]
                cases.append(([command, short, *value], "unrecognized arguments"))
    return cases


ABBREVIATIONS = _abbreviations()


def _cases() -> list:
    cases = []
    for command in ("run", "sweep"):
        for flag, value, expected in CONFIG_CASES + OUTPUT_CASES:
            cases.append(
                pytest.param([command, flag, value], expected, id=f"{command} {flag}={value!r}")
            )
    for flag, value, expected in REPORT_CASES:
        cases.append(pytest.param(["run", flag, value], expected, id=f"run {flag}={value!r}"))
    for args, expected in SWEEP_CASES:
        cases.append(pytest.param(["sweep", *args], expected, id=f"sweep {' '.join(args)!r}"))
    for args, expected in OPS_CASES:
        cases.append(pytest.param(["ops", *args], expected, id=f"ops {' '.join(args)!r}"))
    for args, expected in OTHER_CASES:
        cases.append(pytest.param(args, expected, id=" ".join(args) or "empty"))
    for args, expected in ABBREVIATIONS:
        cases.append(pytest.param(args, expected, id="abbreviated " + " ".join(args)))
    return cases


CASES = _cases()


def test_the_table_is_large():
    assert len(CASES) >= 150
    assert len(ABBREVIATIONS) >= 40


@pytest.mark.parametrize(("args", "expected"), CASES)
def test_bad_input_is_one_error_line_and_touches_nothing(
    args, expected, tmp_path, capsys, monkeypatch
):
    (tmp_path / "afile").write_text("not json")
    (tmp_path / "adir").mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if argv[0] in ("run", "sweep") and "--model" not in argv:
        argv = [argv[0], *FAST, *argv[1:]]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert expected.replace("{tmp}", str(tmp_path)) in err
    assert "Traceback" not in err and "\x1b" not in err
    assert snapshot(tmp_path) == before
