"""The words of the generated text (ntpnb._text)."""

from __future__ import annotations

from ntpnb._text import join_words


def test_join_words_joins_any_items_as_a_sentence_says_them():
    assert join_words([3]) == "3"
    assert join_words(["a", "b"]) == "a and b"
    assert join_words(x for x in (1, 3, 4)) == "1, 3 and 4"
    assert join_words([0.5, "lr = 1", None]) == "0.5, lr = 1 and None"
