"""Every command's --help ends with examples, and every example parses as written."""

import shlex

import pytest

from autocast_explorer.cli import COMMANDS, build_parser, main

COMMAND_NAMES = [command.__name__.rsplit(".", 1)[1] for command in COMMANDS]


def _examples(help_text: str) -> list[list[str]]:
    """The argv of each `autocast-explorer …` line after 'example(s):' (before | && #)."""
    tail = help_text.split("example", 1)[1].split(":", 1)[1]
    lines = []
    for line in tail.splitlines():
        line = line.strip()
        if not line.startswith("autocast-explorer"):
            continue
        line = line.split(" #")[0].split(" | ")[0].split(" && ")[0]
        lines.append(shlex.split(line)[1:])
    return lines


@pytest.mark.parametrize("command", [None, *COMMAND_NAMES, "gui"])
def test_help_shows_examples_that_parse(command, capsys):
    argv = [command, "--help"] if command else ["--help"]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    examples = _examples(capsys.readouterr().out)
    own = [args for args in examples if command is None or args[:1] == [command]]
    assert len(own) >= (1 if command == "gui" else 2)
    for args in examples:
        build_parser().parse_args(args)  # raises UsageError on a flag that does not exist
