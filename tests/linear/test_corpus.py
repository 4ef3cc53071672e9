"""The text corpus (ntpnb.linear._corpus): normalization, the alphabet's ids, the standard library's
docstrings read at run time."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ntpnb.errors import InvalidDataError
from ntpnb.linear import _corpus as corpus
from ntpnb.linear._corpus import decode_ids, encode_text


def test_normalize_text():
    assert corpus.normalize_text("  Héllo,\n\tWORLD 42 -- ok.  ") == "hello world ok"
    with pytest.raises(InvalidDataError):
        corpus.normalize_text(b"bytes")


def test_encode_decode_round_trip_and_errors():
    text = "the quick brown fox"
    ids = corpus.encode_text(text)
    assert corpus.decode_ids(ids) == text
    assert ids.max() < len(corpus.ALPHABET)
    with pytest.raises(InvalidDataError, match="normalize first"):
        corpus.encode_text("Capital")
    with pytest.raises(InvalidDataError, match=r"\[0, 27\)"):
        corpus.decode_ids([27])


@pytest.mark.parametrize("ids", [[-1], [27], [0, 1, 100], np.array([3, -2])])
def test_decode_ids_refuses_ids_outside_the_alphabet(ids):
    """``decode_ids([-1])`` returned 'z' (Python's negative indexing)."""
    with pytest.raises(InvalidDataError, match=r"outside the alphabet's ids \[0, 27\)"):
        decode_ids(ids)
    assert decode_ids(encode_text("hello world")) == "hello world"


@pytest.mark.parametrize("ids", [[1.5], [True], ["a"], [[1, 2]], 5, "abc", None])
def test_decode_ids_refuses_non_integer_ids(ids):
    with pytest.raises(InvalidDataError, match="ids"):
        decode_ids(ids)


@pytest.mark.parametrize("text", [None, 5, ["a", "b"], np.array(["a"])])
def test_encode_text_refuses_a_non_string(text):
    with pytest.raises(InvalidDataError, match="text must be a str"):
        encode_text(text)


def test_stdlib_corpus_is_read_at_run_time_and_normalized():
    text = corpus.stdlib_corpus()
    assert len(text) > 20000
    assert set(text) <= set(corpus.ALPHABET)
    assert "  " not in text and text == text.strip()
    # the corpus starts with the docstring of the first module, normalized
    first = corpus.normalize_text(sys.modules["re"].__doc__ or "")
    assert text.startswith(first[:200])
    assert corpus.stdlib_corpus(100) == text[:100]
    assert corpus.corpus_python_version().split()[-1].startswith(f"{sys.version_info[0]}.")


@pytest.mark.parametrize(("n", "message"), [(0, "positive integer"), (10**9, "fewer than")])
def test_stdlib_corpus_bad_sizes(n, message):
    with pytest.raises(InvalidDataError, match=message):
        corpus.stdlib_corpus(n)


def test_stdlib_docstring_list_bad_modules():
    with pytest.raises(InvalidDataError, match="non-empty"):
        corpus.stdlib_docstring_list([])
    with pytest.raises(InvalidDataError, match="cannot import"):
        corpus.stdlib_docstring_list(["no_such_module_xyz"])
