"""The words of the generated text (ntpnb._text)."""

from __future__ import annotations

from ntpnb._markdown import escape_markdown_but_math, math_html
from ntpnb._text import group_thousands_tex, join_words


def test_join_words_joins_any_items_as_a_sentence_says_them():
    assert join_words([3]) == "3"
    assert join_words(["a", "b"]) == "a and b"
    assert join_words(x for x in (1, 3, 4)) == "1, 3 and 4"
    assert join_words([0.5, "lr = 1", None]) == "0.5, lr = 1 and None"


def test_a_long_count_in_math_is_grouped_as_tex_groups_it_everywhere_math_is_shown():
    assert group_thousands_tex(r"k = 1000000 over (10000 / 1000000)^{1/2}") == (
        r"k = 1{,}000{,}000 over (10{,}000 / 1{,}000{,}000)^{1/2}"
    )
    for kept in ("W_10000", "1.23456", "2^{-1074}", "1{,}000{,}000", "k = 2000"):
        assert group_thousands_tex(kept) == kept
    assert r"\(k = 1{,}000{,}000\)" in math_html("GD at $k = 1000000$: toward")
    assert escape_markdown_but_math("at $k = 100000$") == "at $k = 100{,}000$"


def test_words_beside_math_keep_their_hyphenated_words_and_numbers_whole():
    """A check's words with math in them wrap between words only: ``G-`` / ``test`` never."""
    html = str(math_html("one-hot binary: Monte Carlo G-test $p$ (p-value), 0.292 nats, non-empty"))
    for whole in ("one-hot", "G-test", "(p-value),", "non-empty", "0.292\u00a0nats"):
        assert f'<span class="ntpnb-word">{whole}</span>' in html, whole
    assert '<span class="ntpnb-word">Monte' not in html  # a plain word is left as it is
    after = str(math_html("the rate rises with $n$ ($p$-value), at $k$'s end"))
    assert after.count('<span class="ntpnb-word">') == 2  # the formula and the rest of its word, whole
    assert "\\(p\\)</span>-value),</span>" in after, after
