"""The registry of claims: every claim of both papers, each statement and paper value written once."""

from __future__ import annotations

import ast
import re
import subprocess

import jupytext
import pytest

from ntpnb._toy2d import TOY2D_ENTROPY
from ntpnb.errors import NTPError
from ntpnb.evidence import _registry as registry
from ntpnb.evidence._registry import CLAIMS, SHORT_WORDS, paper_value, sort_key

from conftest import ROOT


def test_registry_holds_every_claim_of_both_papers_in_order():
    expected = [f"A{i}" for i in range(1, 17)] + [f"B{i}" for i in range(1, 12)]
    assert list(CLAIMS) == expected
    assert sorted(CLAIMS, key=sort_key) == expected
    for spec in CLAIMS.values():
        assert spec.where and spec.statement and spec.paper_value
        assert "|" not in spec.statement + spec.paper_value  # table cells
        assert 3 <= len(spec.short.split()) <= SHORT_WORDS and "$" not in spec.short, spec.id
    with pytest.raises(NTPError, match="A1, A2"):
        paper_value("C1", "corr")


def test_a_short_statement_is_plain_words_with_the_registrys_numbers(monkeypatch):
    assert CLAIMS["B8"].short.endswith(f"above {paper_value('B8', 'corr'):g}")  # %(corr)g filled in
    a1 = CLAIMS["A1"]
    made = {"id": "A1", "where": a1.where, "statement": a1.statement, "paper_value": "theorem"}
    with pytest.raises(NTPError, match=f"A1's short statement .*at most {SHORT_WORDS} plain words"):
        registry.ClaimSpec(**made, short="the loss is $\\ge \\mathcal{H}$")
    with pytest.raises(NTPError, match="A1's short statement"):
        registry.ClaimSpec(**made, short=" ".join(["word"] * (SHORT_WORDS + 1)))
    with pytest.raises(NTPError, match="claim A1 has no short statement"):
        registry.ClaimSpec(**made, short="")
    with pytest.raises(NTPError, match=r"without \|"):
        registry.ClaimSpec(**{**made, "statement": "a | b"}, short="a plain short statement")
    with pytest.raises(NTPError, match=r"names a claim twice: .'A1'"):
        registry._by_id((registry.ClaimSpec(**made, short="a plain short statement"),) * 2)


#: Tracked text the registry's statements and paper values must not be copied into.
_TEXT_SUFFIXES = (".md", ".py", ".yml", ".toml", ".cff", ".txt", ".cfg")


def _tracked_text_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in out.stdout.splitlines():
        path = ROOT / name
        if path.suffix in _TEXT_SUFFIXES and path.exists() and name != "ntpnb/evidence/_registry.py":
            yield name, path.read_text(encoding="utf-8")


def test_a_claims_statement_and_paper_value_are_written_once():
    """The registry is the one source: no page or module repeats its text, and no hand-written
    page holds a table of claims (a second copy drifts, as book/claims.md did). Chapters state
    each theorem in full, in their own words, and may coincide with a short statement."""
    texts = {name: body for name, body in _tracked_text_files() if not name.startswith("notebooks/")}
    assert "book/claims.md" not in texts
    for cid, spec in CLAIMS.items():
        numbered = [spec.paper_value] if re.search(r"\d\.\d", spec.paper_value) else []
        quoted = [spec.statement, spec.short, *numbered]
        for text in quoted:
            copies = [name for name, body in texts.items() if text in body]
            assert not copies, f"{cid}: {text!r} is also written in {copies}"
    for name, body in dict(_tracked_text_files()).items():
        if name.endswith(".md"):
            rows = re.findall(r"^\| *\**([AB]\d+)\** *\|", body, flags=re.M)
            assert not rows, f"{name} holds a table of claims ({rows[:3]}...): generate it from the registry"


def test_a_paper_value_is_data_of_the_registry():
    assert paper_value("B8", "corr") == 0.99 and CLAIMS["B8"].paper_value.endswith("$> 0.99$")
    assert paper_value("A8", "entropy") == TOY2D_ENTROPY  # the entropy our 2D instance is tempered to
    b11 = CLAIMS["B11"]
    assert all(part in b11.paper_value for part in ("$> 0.99$", "$9.59$ (global)", "$0.09$ (local)"))
    assert dict(b11.values) == {
        "local_corr": 0.99,
        "global_distance": 9.59,
        "local_distance": 0.09,
        "trials": 100,
    }
    with pytest.raises(NTPError, match="local_corr, global_distance"):
        paper_value("B11", "corr")
    with pytest.raises(NTPError, match="values: none"):
        paper_value("A1", "gap")
    with pytest.raises(NTPError, match="A1, A2"):
        paper_value("C1", "x")


def _paper_numbers(claim_ids) -> dict[str, str]:
    """The paper values of ``claim_ids`` as they print (``"0.99"``) -> which claim they belong to."""
    return {f"{v:g}": f"{cid} {name}" for cid in claim_ids for name, v in CLAIMS[cid].values.items()}


def _typed(text: str, numbers: dict[str, str]) -> list[str]:
    """The numbers typed in ``text`` (not part of a longer number)."""
    return [n for n in numbers if re.search(rf"(?<![\d.]){re.escape(n)}(?!\.?\d)", text)]


def _quoted_paper_values(cell: str) -> list[str]:
    """The literal text of every ``paper=`` argument of ``cell`` (the f-strings' literal parts)."""
    quoted = []
    for node in ast.walk(ast.parse(cell)):
        for keyword in getattr(node, "keywords", []) if isinstance(node, ast.Call) else []:
            if keyword.arg == "paper":
                parts = keyword.value.values if isinstance(keyword.value, ast.JoinedStr) else [keyword.value]
                quoted += [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
    return quoted


#: Profile parameters equal to a paper value of a claim their chapter checks, but settings, not
#: thresholds from the paper: they are not read from the registry.
_SETTINGS_LIKE_A_PAPER_VALUE = {
    # Fig. 3's step size; the authors' C_thres; the error rate of B11's comparisons
    "07_attention": {"lr_global", "pseudo_threshold", "consistency_level"},
}


def test_paper_values_are_not_typed_in_checks_or_profiles():
    """A check quotes, and the paper profile requires, the registry's numbers: it does not type them."""
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        numbers = _paper_numbers(_checked_ids(path.read_text()))
        cells = [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]
        for text in (q for cell in cells for q in _quoted_paper_values(cell)):
            typed = [numbers[n] for n in _typed(text, numbers)]
            assert not typed, f"{path.stem}: paper={text!r} types {typed}: use paper_value"
    tree = ast.parse((ROOT / "ntpnb" / "chapter" / "_parameters.py").read_text())
    checked = {p.stem: _checked_ids(p.read_text()) for p in (ROOT / "notebooks").glob("*.md")}
    for notebook in (n for n in ast.walk(tree) if isinstance(n, ast.Dict)):
        for name, per in zip(notebook.keys, notebook.values, strict=True):
            if not (isinstance(name, ast.Constant) and name.value in checked and isinstance(per, ast.Dict)):
                continue
            numbers = _paper_numbers(checked[name.value])
            allowed = _SETTINGS_LIKE_A_PAPER_VALUE.get(name.value, set())
            for values in (v for v in per.values if isinstance(v, ast.Dict)):
                for key, value in zip(values.keys, values.values, strict=True):
                    if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                        typed = _typed(f"{value.value:g}", numbers)
                        assert not typed or key.value in allowed, (
                            f"_parameters.py: {name.value} {key.value} = {value.value} is "
                            f"{numbers[typed[0]]}: use paper_value"
                        )


def _checked_ids(source: str) -> set[str]:
    """The claim ids a notebook's source checks or qualifies."""
    return set(re.findall(r"claims\.(?:check|qualify)\(\s*\"([AB]\d+)\"", source))


def _expand(cell: str) -> set[str]:
    """``"A6-A13 (...), A15"`` as the set of ids it names."""
    ids = set()
    for paper, first, last in re.findall(r"\b([AB])(\d+)(?:-[AB]?(\d+))?", cell):
        ids |= {f"{paper}{i}" for i in range(int(first), int(last or first) + 1)}
    return ids


def test_readme_lists_the_claims_each_chapter_checks():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## What is reproduced", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| (\d\d) [^|]*\| ([^|]*) \|$", section, flags=re.M))
    sources = sorted((ROOT / "notebooks").glob("*.md"))
    assert sorted(rows) == [p.stem[:2] for p in sources]
    for path in sources:
        assert _expand(rows[path.stem[:2]]) == _checked_ids(path.read_text()), path.stem
    every = set().union(*(_checked_ids(p.read_text()) for p in sources))
    assert every == set(CLAIMS), f"no chapter checks {sorted(set(CLAIMS) - every)}"


def test_protocols_are_declared_where_the_paper_and_the_authors_code_differ():
    from ntpnb.evidence._checks import PROTOCOL_KEY
    from ntpnb.evidence._registry import _protocols

    # the first is the claim as the paper states it, which decides; the authors' code runs another
    assert list(CLAIMS["B10"].protocols) == ["paper's loss", "authors' loss"]
    assert list(CLAIMS["B11"].protocols) == ["every trial", "authors' filter"]
    assert (CLAIMS["B10"].authors, CLAIMS["B11"].authors) == ("authors' loss", "authors' filter")
    assert all(not spec.authors for cid, spec in CLAIMS.items() if cid not in ("B10", "B11"))
    assert "softmax" in CLAIMS["B10"].protocols["authors' loss"]
    assert "c_y^\\top" in CLAIMS["B10"].protocols["paper's loss"]
    assert {cid for cid, spec in CLAIMS.items() if spec.protocols} == {"B10", "B11"}
    for spec in CLAIMS.values():
        for key, words in spec.protocols.items():
            assert PROTOCOL_KEY.match(key) and words.strip() and "|" not in words
    # the filter's threshold is a parameter of chapter 7 (drop_corr), not typed here again
    assert not re.search(r"\d", "".join(CLAIMS["B11"].protocols.values()))
    with pytest.raises(NTPError, match="one protocol is no choice"):
        _protocols("B10", {"authors' loss": "x"})
    with pytest.raises(NTPError, match="a key of words"):
        _protocols("B10", {"authors' loss": "x", "paper [loss]": "y"})
    with pytest.raises(NTPError, match="a key of words"):
        _protocols("B10", {"authors' loss": "x", "paper's loss": "a | b"})
    b10 = CLAIMS["B10"]
    made = {
        "id": "B10",
        "where": b10.where,
        "statement": b10.statement,
        "paper_value": "x",
        "short": b10.short,
    }
    with pytest.raises(NTPError, match=r"the authors' protocol .* after the first"):
        registry.ClaimSpec(**made, protocols=b10.protocols, authors="paper's loss")
    with pytest.raises(NTPError, match="the authors' protocol"):
        registry.ClaimSpec(**made, protocols=b10.protocols)


def test_a_map_declares_the_protocols_of_the_claim_whose_settings_it_runs():
    from ntpnb.evidence._registry import MAPS, declared_protocols

    assert declared_protocols("M5") == CLAIMS["B10"].protocols  # one source: B10's two losses
    assert declared_protocols("B11") == CLAIMS["B11"].protocols
    assert not declared_protocols("M1") and not declared_protocols("A1") and not declared_protocols("Z9")
    assert {mid for mid, spec in MAPS.items() if spec.protocols} == {"M5"}
    with pytest.raises(NTPError, match="one protocol is no choice"):
        registry._maps((registry.MapSpec("M9", "B", "t", "a", "v", "p", ("B10",), {"authors' loss": "x"}),))


def test_every_claim_and_map_has_one_headline_in_a_chapter_that_checks_it():
    """The report shows each claim's and each map's headline: one chapter states it, and checks it."""
    from ntpnb.evidence._registry import MAPS

    sources = {p.stem: p.read_text() for p in sorted((ROOT / "notebooks").glob("*.md"))}
    stated: dict[str, list[str]] = {}
    for name, source in sources.items():
        for cid in re.findall(r"claims\.headline\(\s*\"([ABM]\d+)\"", source):
            stated.setdefault(cid, []).append(name)
    expected = set(CLAIMS) | set(MAPS)
    assert set(stated) == expected, f"no headline for {sorted(expected - set(stated))}"
    for cid, names in stated.items():
        assert len(names) == 1, f"{cid} has a headline in {names}"
        checked = set(re.findall(r"claims\.check\(\s*\"(M\d+)\"", sources[names[0]]))
        checked |= _checked_ids(sources[names[0]])  # a map's checks, a claim's checks and qualifications
        assert cid in checked, f"{names[0]} states {cid}'s headline, checks it not"
