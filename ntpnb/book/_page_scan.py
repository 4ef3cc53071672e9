r"""What a reader must never see on a built page: raw TeX, parameter names in captions, hidden figures.

Each rule is a function of one page's parsed HTML (:func:`parse`) returning a list of
:class:`Finding`; :func:`scan_page` applies the first four. The rules:

* :func:`raw_tex`: a TeX command (``\operatorname``, ``\tfrac``) or a ``$`` in the page's text
  outside math (the elements MathJax typesets) and code: math that the Markdown did not read as
  math, as when a line of a formula starting with ``+ `` became a list item.
* :func:`caption_parameters`: a figure caption showing a chapter parameter's name in code
  (``n_random_W``) where it should show the run's value, glued (``{glue:text}`par_n_random_W```).
* :func:`hidden_figures`: a numbered figure inside a closed block (a collapsed cell output), which
  the reader does not see though the numbering counts it.
* :func:`figure_number_gaps`: the figure numbers a reader sees, in page order, skip or repeat one.
* :func:`over_precise_numbers`: a decimal number with more than :data:`MAX_DIGITS` significant
  digits (``0.0333333``, ``1.00208e-292``), or a number that says nothing (``< 1e+00``, ``0 ± 0``,
  ``0.00e+00``), in the page's prose, math or cell outputs (code a reader edits is not scanned).
* :func:`code_names`: a name the package defines (:mod:`._code_names`: ``corr_corrected``,
  ``ntpnb-active-set``) in what a reader reads (:func:`read_texts`): prose, headings, tables,
  captions and cell outputs (a folded cell's too), inline code in a caption, a heading or a
  cell's output; not code a reader runs or types (a cell's source, a code block) or that the
  prose cites as code (inline code naming the API, a parameter or a setting, as a "Try it"
  command or the notation page's column of the code's names does).
* :func:`ascii_math`: math typed in ASCII (``||w_1 - w_5||``, ``H_{t+1}``, ``W^mm``, ``W~mm``,
  ``W_k``, ``W*``, ``>=``, ``->``) in what a reader reads as words (:func:`read_texts`, but not a
  cell's printed output, which is terminal text), where the page should typeset it (``$...$``).
* :func:`repeated_words` and :func:`unbalanced_brackets`: a word written twice in a row ("the the"),
  and a bracket that opens without closing or closes without opening, in a block of prose (math
  and code set aside; an interval may open with one kind and close with the other, ``(0, 1]``).
* :func:`nested_brackets`: an aside in round brackets opened inside another in a block of prose
  ("(its rise is established (p = 0.01))"), which a sentence says with a colon or a semicolon
  instead; an equation's number (``(6a)``) or a function's argument (``corr(W, V)``) is no aside.
* :func:`ungrouped_counts`: a count of five digits or more a reader reads ungrouped (``51009
  contexts``, where the pages write ``51,009``), in what a reader reads as words
  (:func:`read_texts`: prose, tables, captions, cell outputs, not code). What is no count is
  exempt, as :data:`~ntpnb._text.LONG_COUNT` says: a year (four digits), a decimal, an
  identifier, a version or a path (``arXiv:2402.18551``, ``1.26.4``), a commit's hash, and the
  number naming a seed or a commit (``seed 12345``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._digits import SHOWN_DIGITS
from .._text import LONG_COUNT, LONG_COUNT_TEX
from ._code_names import found_names

if TYPE_CHECKING:  # BeautifulSoup (the test extra; the book's theme needs it too) is imported by parse
    from bs4 import BeautifulSoup, Tag

#: The elements whose text is not prose: MathJax's math, code, scripts and styles.
NOT_PROSE_CLASSES = frozenset({"math", "highlight", "MathJax", "MathJax_Preview"})
NOT_PROSE_TAGS = frozenset({"pre", "code", "kbd", "samp", "script", "style", "textarea", "mjx-container"})

#: TeX left in prose: a backslash command or an escaped brace, or a dollar sign.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[{}]|\$")

#: A figure's number as its caption shows it: ``Fig. 4.2``.
FIGURE_NUMBER = re.compile(r"(\d+(?:\.\d+)*)")

#: A decimal number as a page shows it: digits with a point or an exponent (an integer is exact,
#: a count or a step; a version string such as 1.26.4 and an identifier such as arXiv:2402.18551
#: are no numbers).
DECIMAL = re.compile(r"(?<![\w.:])(?:\d+\.\d+(?:[eE][-+\u2212]?\d+)?|\d+[eE][-+\u2212]?\d+)(?![\w.])")
#: The most significant digits a number on a page may show.
MAX_DIGITS = SHOWN_DIGITS
#: Numbers that say nothing: a bound of one written as a power, a zero tolerance, a zero in exponent form.
EMPTY_NUMBER = re.compile(r"< ?1e\+00\b|(?<![\d.])0 ± 0(?![\d.])|(?<![\d.])0\.0+e[+-]00\b")
#: The elements whose numbers are not shown to be read: code (a code cell's source, a code block,
#: a literal in prose, a constant's value in the API reference: Sphinx's ``pre`` spans) but not a
#: cell's output, which is styled as a code block; scripts, styles.
NOT_SHOWN_CLASSES = frozenset({"cell_input", "highlight", "pre"})
NOT_SHOWN_TAGS = frozenset({"script", "style", "textarea", "kbd", "code"})
SHOWN_CLASSES = frozenset({"cell_output"})

#: Characters of context shown either side of a finding.
CONTEXT = 40


@dataclass(frozen=True)
class Finding:
    """One thing a reader must not see: which rule, where (a figure or a passage), what."""

    rule: str
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}: {self.what}"


def parse(html: str) -> BeautifulSoup:
    """The page ``html`` parsed (Python's own HTML parser, no compiled one needed)."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def _is_prose(element: Tag) -> bool:
    """Whether the text inside ``element`` (and its ancestors) is prose a reader reads."""
    for node in [element, *element.parents]:
        if node.name in NOT_PROSE_TAGS or NOT_PROSE_CLASSES & set(node.get("class") or ()):
            return False
    return True


def _body(page: BeautifulSoup) -> Tag:
    return page.body or page


def _snippet(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with :data:`CONTEXT` characters either side, on one line."""
    left, right = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
    shown = " ".join(text[left:right].split())
    return ("..." if left else "") + shown + ("..." if right < len(text) else "")


def _figure_label(figure: Tag) -> str:
    """How a finding names ``figure``: its number as shown (``Fig. 4.2``), else its id."""
    number = figure.find(class_="caption-number")
    if number is not None:
        return " ".join(number.get_text().split())
    return f"figure #{figure.get('id', '?')}"


def _pattern_findings(
    page: BeautifulSoup, pattern: re.Pattern[str], rule: str, scanned: Callable[[Tag], bool]
) -> list[Finding]:
    """Each text whose element is ``scanned`` and where ``pattern`` matches: one finding a passage.

    The finding shows the passage from the first match, and each text matched once.
    """
    findings = []
    for text in _body(page).find_all(string=True):
        if type(text).__name__ != "NavigableString" or not scanned(text.parent):
            continue  # comments, doctypes and CDATA are no text
        content = str(text)
        matches = list(pattern.finditer(content))
        if matches:
            shown = list(dict.fromkeys(m.group(0) for m in matches))
            passage = _snippet(content, matches[0].start(), min(matches[-1].end(), matches[0].start() + 80))
            findings.append(Finding(rule, passage, " ".join(shown)))
    return findings


def raw_tex(page: BeautifulSoup) -> list[Finding]:
    """TeX commands and dollar signs in the page's prose (:data:`RAW_TEX`): one finding a passage."""
    return _pattern_findings(page, RAW_TEX, "raw TeX", _is_prose)


def caption_parameters(page: BeautifulSoup, names: Collection[str]) -> list[Finding]:
    """Each figure caption's code naming one of ``names`` (the chapter's parameters)."""
    findings = []
    wanted = set(names)
    for figure in _body(page).find_all("figure"):
        for caption in figure.find_all("figcaption"):
            for code in caption.find_all("code"):
                shown = code.get_text().strip()
                if shown in wanted:
                    findings.append(
                        Finding("parameter name in a caption", _figure_label(figure), f"`{shown}`")
                    )
    return findings


def _closed_block(element: Tag) -> Tag | None:
    """The closed ``<details>`` block ``element`` sits in, if any."""
    for parent in element.parents:
        if parent.name == "details" and not parent.has_attr("open"):
            return parent
    return None


def _block_label(block: Tag) -> str:
    """What a closed block's summary says while it is closed (``Show code cell output``)."""
    summary = block.find("summary")
    if summary is None:
        return "a closed block"
    closed = summary.find(class_="collapsed") or summary
    return repr(" ".join(closed.get_text().split()))


def hidden_figures(page: BeautifulSoup) -> list[Finding]:
    """Each figure a closed block (``<details>`` without ``open``) hides, with the block's summary."""
    findings = []
    for figure in _body(page).find_all("figure"):
        block = _closed_block(figure)
        if block is not None:
            findings.append(Finding("figure in a closed block", _figure_label(figure), _block_label(block)))
    return findings


def visible_figure_numbers(page: BeautifulSoup) -> list[str]:
    """The numbers (``4.2``) of the numbered figures a reader sees, in page order."""
    numbers = []
    for figure in _body(page).find_all("figure"):
        label = figure.find(class_="caption-number")
        match = FIGURE_NUMBER.search(label.get_text()) if label is not None else None
        if match and _closed_block(figure) is None:
            numbers.append(match.group(1))
    return numbers


def figure_number_gaps(page: BeautifulSoup) -> list[Finding]:
    """Where the visible figure numbers skip or repeat: each follows the one before by one."""
    numbers = visible_figure_numbers(page)
    findings = []
    for before, after in itertools.pairwise(numbers):
        *head, last = before.split(".")
        expected = ".".join([*head, str(int(last) + 1)])
        if after != expected:
            findings.append(
                Finding("figure numbers", f"Fig. {before} -> Fig. {after}", f"expected {expected}")
            )
    if numbers and numbers[0].split(".")[-1] != "1":
        findings.insert(0, Finding("figure numbers", f"Fig. {numbers[0]}", "the first figure seen"))
    return findings


def significant_digits(number: str) -> int:
    """The significant digits ``number`` (a match of :data:`DECIMAL`) shows: ``0.0500`` has 3."""
    mantissa = re.split(r"[eE]", number)[0].replace(".", "")
    return len(mantissa.lstrip("0")) or 1


def _is_shown(element: Tag) -> bool:
    """Whether the numbers in ``element`` are shown to be read (prose, math, an output, not code)."""
    nodes = [element, *element.parents]
    if any(node.name in NOT_SHOWN_TAGS for node in nodes):
        return False
    if any(SHOWN_CLASSES & set(node.get("class") or ()) for node in nodes):
        return True
    return not any(NOT_SHOWN_CLASSES & set(node.get("class") or ()) for node in nodes)


def over_precise_numbers(page: BeautifulSoup) -> list[Finding]:
    """Each over-precise or empty number in the page's prose, math and cell outputs.

    Over-precise: a decimal number shown with more than :data:`MAX_DIGITS` significant digits;
    empty: an :data:`EMPTY_NUMBER`. One finding a number.
    """
    findings = []
    for text in _body(page).find_all(string=True):
        if type(text).__name__ != "NavigableString" or not _is_shown(text.parent):
            continue
        content = str(text)
        for match in DECIMAL.finditer(content):
            if significant_digits(match.group(0)) > MAX_DIGITS:
                passage = _snippet(content, match.start(), match.end())
                findings.append(Finding("over-precise number", passage, match.group(0)))
        for match in EMPTY_NUMBER.finditer(content):
            passage = _snippet(content, match.start(), match.end())
            findings.append(Finding("empty number", passage, match.group(0)))
    return findings


def scan_page(html: str, parameter_names: Collection[str] = ()) -> list[Finding]:
    """Every finding of the page ``html`` by every rule; ``parameter_names``: its chapter's parameters."""
    page = parse(html)
    return [
        *raw_tex(page),
        *caption_parameters(page, parameter_names),
        *hidden_figures(page),
        *figure_number_gaps(page),
    ]


#: Where text is code a reader runs or types, not words: a cell's source, a code block outside a
#: cell's output, scripts and styles, and MathJax's math.
_CODE_CLASSES = frozenset({"cell_input", "math", "MathJax", "MathJax_Preview"})
_CODE_TAGS = frozenset({"script", "style", "textarea", "mjx-container"})
#: Where inline code is read as words (a caption, a heading; a cell's output too), not as the
#: prose's citation of the API, a parameter or a setting (a "Try it" command, the notation page's
#: column of the code's names).
_READ_AS_WORDS = frozenset({"figcaption", "caption", "h1", "h2", "h3", "h4", "h5", "h6"})


def _read_text(element: Tag) -> bool:
    """Whether the text in ``element`` is read as words (:func:`read_texts`)."""
    nodes = [element, *element.parents]
    if any(n.name in _CODE_TAGS or _CODE_CLASSES & set(n.get("class") or ()) for n in nodes):
        return False
    in_output = any("cell_output" in (n.get("class") or ()) for n in nodes)
    if any(n.name == "pre" for n in nodes) and not in_output:
        return False  # a code block of the prose (a command to type)
    if any(n.name in ("code", "kbd", "samp") for n in nodes):
        return in_output or any(n.name in _READ_AS_WORDS for n in nodes)
    return True


def read_texts(page: BeautifulSoup) -> list[str]:
    """Every text of the page that a reader reads as words (see :func:`code_names`), in page order."""
    return [
        str(text)
        for text in _body(page).find_all(string=True)
        if type(text).__name__ == "NavigableString" and _read_text(text.parent)
    ]


def code_texts(page: BeautifulSoup) -> list[str]:
    """Every text of the page that is code: what :func:`read_texts` leaves out, but scripts and math.

    A cell's source, a code block, inline code the prose cites.
    """
    skipped = _CODE_TAGS | {"script", "style"}
    return [
        str(text)
        for text in _body(page).find_all(string=True)
        if type(text).__name__ == "NavigableString"
        and not _read_text(text.parent)
        and not any(
            n.name in skipped or {"math", "MathJax", "MathJax_Preview"} & set(n.get("class") or ())
            for n in [text.parent, *text.parents]
        )
    ]


def code_names(page: BeautifulSoup, names: Collection[str]) -> list[Finding]:
    """Each of ``names`` (the package's, :func:`~._code_names.defined_names`) in the page's read text.

    One finding a name and passage.
    """
    findings = []
    for content in read_texts(page):
        for start, end, word in found_names(content, names):
            findings.append(Finding("code name", _snippet(content, start, end), word))
    return list(dict.fromkeys(findings))


#: Math typed in ASCII: a norm's double bar, a braced subscript or superscript, the code's names of
#: the papers' matrices (``W^mm``, ``W~mm``, ``W^cyc``, ``CE^T``), a capital with a subscript
#: (``W_k``, ``P_F``, ``H_t``) or a letter with a one-character one (``w_1``, ``m_t``), a starred
#: capital (``W*``, ``L*``), ``CE - H``, and a relation or an arrow written with two characters.
ASCII_MATH = re.compile(
    r"\|\||\b[A-Za-z]+[_^]\{|[\^~](?:mm|cyc|inf|d|p|T)\b|\b[A-Z]_[A-Za-z0-9]+\b"
    r"|\b[a-z]_[a-z0-9]\b|\b[A-Z]\*(?![\w*])|\bCE - H\b|>=|<=|!=|=>|(?<![-<])->"
)


def _printed(element: Tag) -> bool:
    """Whether ``element`` is a cell's printed output or inline code: terminal text, not words."""
    return any(n.name in ("pre", "code", "kbd", "samp") for n in [element, *element.parents])


def ascii_math(page: BeautifulSoup) -> list[Finding]:
    """Math typed in ASCII (:data:`ASCII_MATH`) in the words a reader reads: one finding a passage.

    The texts of :func:`read_texts` but a cell's printed output (a check's line shows its TeX
    source there, as a terminal does) and inline code.
    """
    return _pattern_findings(page, ASCII_MATH, "ASCII math", lambda e: _read_text(e) and not _printed(e))


#: The blocks whose text is one passage of prose, and what inside them is set aside (math, code).
_BLOCKS = "p, h1, h2, h3, h4, h5, h6, dt, figcaption, th, td, li"
_SET_ASIDE = "span.math, div.math, mjx-container, code, pre, kbd, script, style"
#: A word written twice in a row (letters only: "0 0" in a table is two numbers).
_REPEATED = re.compile(r"(?i)\b([a-z]+)\s+\1\b")
_OPENS, _CLOSES = "([{", ")]}"


#: What stands for a piece of math or code set aside: no word, so never a repeated one.
_ASIDE = "\u2026"


def _passages(page: BeautifulSoup) -> list[str]:
    """The text of each block of prose (:data:`_BLOCKS`), math and code each as :data:`_ASIDE`."""
    texts = []
    for block in _body(page).select(_BLOCKS):
        if block.find(_BLOCKS.split(", ")) is not None or block.find_parent(class_="cell_input"):
            continue  # a block holding blocks: its own are read one by one
        copy = parse(str(block))
        for aside in copy.select(_SET_ASIDE):
            aside.replace_with(_ASIDE)
        texts.append(" ".join(copy.get_text().split()))
    return [text for text in texts if text]


def repeated_words(page: BeautifulSoup) -> list[Finding]:
    """Each word written twice in a row in a passage of prose ("the the")."""
    findings = []
    for text in _passages(page):
        for match in _REPEATED.finditer(text):
            findings.append(
                Finding("repeated word", _snippet(text, match.start(), match.end()), match.group(1))
            )
    return findings


def bracket_balance(text: str) -> str | None:
    """What is wrong with the brackets of ``text`` (``"')' closes nothing"``), or None if they balance.

    A round or square bracket closes either kind (an interval: ``(0, 1]``); a brace closes a brace.
    """
    stack: list[str] = []
    for char in text:
        if char in _OPENS:
            stack.append(char)
        elif char in _CLOSES:
            if not stack or (char == "}") != (stack[-1] == "{"):
                return f"{char!r} closes nothing"
            stack.pop()
    return f"{stack[-1]!r} is not closed" if stack else None


def unbalanced_brackets(page: BeautifulSoup) -> list[Finding]:
    """Each passage of prose whose brackets do not balance (:func:`bracket_balance`)."""
    findings = []
    for text in _passages(page):
        problem = bracket_balance(text)
        if problem is not None:
            findings.append(Finding("unbalanced brackets", _snippet(text, 0, min(len(text), 80)), problem))
    return findings


#: A round bracket that opens no aside: an equation's number (``(4)``, ``Eq. (6a)``) or a
#: function's argument (``corr(W, V)``, ``Dirichlet(1)``: the bracket right after a word).
_NOT_AN_ASIDE = re.compile(r"\((?=\d{1,2}[a-z]?\))|(?<=[\w\])])\(")


def nested_bracket(text: str) -> int | None:
    """Where in ``text`` an aside in round brackets opens inside another, or None if none does.

    An equation's number or a function's argument (:data:`_NOT_AN_ASIDE`) is no aside; a square
    bracket (an interval's end, a citation) closes what it closes and opens no aside.
    """
    not_asides = {m.start() for m in _NOT_AN_ASIDE.finditer(text)}
    stack: list[bool] = []  # each open bracket: whether it opened an aside
    for at, char in enumerate(text):
        if char in "([":
            aside = char == "(" and at not in not_asides
            if aside and any(stack):
                return at
            stack.append(aside)
        elif char in ")]" and stack:
            stack.pop()
    return None


def nested_brackets(page: BeautifulSoup) -> list[Finding]:
    """Each passage of prose with a round bracket inside a round one (:func:`nested_bracket`)."""
    findings = []
    for text in _passages(page):
        at = nested_bracket(text)
        if at is not None:
            findings.append(Finding("nested brackets", _snippet(text, at, at + 1), text[at : at + 30]))
    return findings


def ungrouped_counts(page: BeautifulSoup) -> list[Finding]:
    """Each count of five digits or more that the page's read text or its math shows ungrouped (``1000000``).

    One finding a count; what is exempt is said in the module's docstring.
    """
    findings = []
    texts = [(LONG_COUNT, content) for content in read_texts(page)]
    texts += [(LONG_COUNT_TEX, math.get_text()) for math in _body(page).select(".math")]  # its TeX
    for pattern, content in texts:
        for match in pattern.finditer(content):
            passage = _snippet(content, match.start(), match.end())
            findings.append(Finding("ungrouped count", passage, match.group()))
    return findings
