"""bench/picture_lines.py: the phrases of a person's transcription of a picture — a short line
whole, a long one as a seeded window, a lone character or mark left out."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench.picture_lines import line_phrases


def test_short_lines_are_whole_and_long_ones_a_window() -> None:
    long_cjk = "有評是是非非之士師也是非不得問之人要取之"
    long_latin = "To facilitate the shot type analysis in videos, we collect MovieShots"
    found = line_phrases(["我是中国人", "TEST", "TM", "3", long_cjk, long_latin], "x.png")
    assert found[:3] == ["我是中国人", "TEST", "TM"]  # a lone "3" is not searched for
    cjk, latin = found[3:]
    assert len(cjk) == 8 and cjk in long_cjk
    assert len(latin.split()) == 5 and latin in long_latin


def test_the_same_file_gives_the_same_phrases() -> None:
    lines = [f"第{n}行的内容比八个字符更长一些" for n in range(10)]
    assert line_phrases(lines, "a.jpg") == line_phrases(lines, "a.jpg")
    assert line_phrases(lines, "a.jpg") != line_phrases(lines, "b.jpg")
