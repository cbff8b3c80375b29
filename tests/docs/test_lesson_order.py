"""docs/window.md lists the lessons as the panel steps through them: each by its title, in order."""

from pathlib import Path

from autocast_explorer.core.learning.lessons import LESSONS

WINDOW_MD = Path(__file__).resolve().parents[2] / "docs" / "window.md"


def test_window_md_names_every_lesson_by_its_title_in_the_panel_s_order():
    text = " ".join(WINDOW_MD.read_text(encoding="utf-8").split())  # wrapped lines joined
    places = [text.find(f"{lesson.number} *{lesson.title}*") for lesson in LESSONS]
    missing = [lesson.title for lesson, at in zip(LESSONS, places, strict=True) if at < 0]
    assert missing == []
    assert places == sorted(places)
