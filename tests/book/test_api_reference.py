"""The API reference's pages: which names a page documents, their types as written, every name once."""

from __future__ import annotations

import io
import re
from html import unescape
from pathlib import Path

import pytest
import yaml

import ntpnb
from ntpnb import attention, chapter, errors, explore, optim, statistics
from ntpnb.book._api_reference import external_url, home_of, names_defined_in

from conftest import ROOT

NUMPY_TYPING = "https://numpy.org/doc/stable/reference/typing.html"


def test_a_module_page_lists_the_public_names_the_module_defines_in_the_order_of_all():
    loss = "entropy ce_loss ce_grad kl_divergence logits softmax".split()  # as ntpnb.__all__ lists them
    assert names_defined_in("ntpnb.linear._loss", "ntpnb") == loss
    # a name re-exported from another module of the package is on that module's page
    assert names_defined_in("ntpnb._qp", "ntpnb") == ["SVMSolution"]
    assert "correlation" in names_defined_in("ntpnb._direction", "ntpnb.attention")
    assert "correlation" not in names_defined_in("ntpnb.attention._batched_training", "ntpnb.attention")
    assert names_defined_in("ntpnb", "ntpnb") == ["compile_kernels"]  # no dunder, no subpackage
    with pytest.raises(ValueError, match="no __all__"):
        names_defined_in("ntpnb.settings", "ntpnb.settings")


def test_data_is_at_home_where_its_comment_documents_it():
    assert home_of("ntpnb", "SEPARABILITY_METHODS") == "ntpnb.linear._separability"
    assert home_of("ntpnb.linear", "TOY2D_SUPPORTS") == "ntpnb._toy2d"
    assert home_of("ntpnb", "attention") is None  # a subpackage: its own pages


@pytest.mark.parametrize(
    "module", [ntpnb, attention, optim, errors, statistics, chapter, explore], ids=lambda m: m.__name__
)
def test_every_public_name_has_a_module_that_documents_it(module):
    """A function or class by its ``__module__``; data by a ``#:`` comment (else it has no page)."""
    for name in module.__all__:
        if name.startswith("__") or name in ("optim", "attention"):
            continue
        home = home_of(module.__name__, name)
        assert home is not None and home.startswith("ntpnb"), f"{module.__name__}.{name}: {home}"


def test_numpy_and_standard_library_types_link_to_their_documentation():
    assert external_url("numpy.typing.ArrayLike") == f"{NUMPY_TYPING}#numpy.typing.ArrayLike"
    assert external_url("np.ndarray") == "https://numpy.org/doc/stable/reference/generated/numpy.ndarray.html"
    generator = "https://numpy.org/doc/stable/reference/random/generator.html#numpy.random.Generator"
    assert external_url("numpy.random._generator.Generator") == generator  # where numpy defines it
    assert external_url("numpy.linalg.LinAlgError") is None  # no page known: shown unlinked
    callable_ = "https://docs.python.org/3/library/collections.abc.html#collections.abc.Callable"
    assert external_url("collections.abc.Callable") == callable_
    assert external_url("pathlib._local.Path") is None  # a private module: no such anchor
    assert external_url("ntpnb.NTPData") is None and external_url("Sequence") is None


# ---------------------------------------------------------------- a small book built in-process
def book_settings() -> dict:
    """The book's settings of autodoc, napoleon and the Python domain (``_config.yml``)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    keys = ("autodoc_", "napoleon_", "python_", "nitpick")
    settings = {k: v for k, v in config.items() if k.startswith(keys)}
    settings["nitpick_ignore_regex"] = [tuple(pair) for pair in settings.get("nitpick_ignore_regex", [])]
    return settings


def build(tmp_path: Path, pages: dict[str, str]) -> tuple[Path, str]:
    """Build ``pages`` (name -> reStructuredText) with the API extension: its HTML folder, its warnings."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("")
    toctree = "\n".join(f"   {name}" for name in pages)
    (src / "index.rst").write_text(f"Index\n=====\n\n.. toctree::\n\n{toctree}\n")
    for name, body in pages.items():
        (src / f"{name}.rst").write_text(f"{name}\n{'=' * len(name)}\n\n{body}\n")
    warnings = io.StringIO()
    overrides = {
        "extensions": ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "ntpnb.book._api_reference"],
        "nitpicky": True,
        **book_settings(),
    }
    out = tmp_path / "html"
    doctrees = tmp_path / "doctrees"
    # in docutils' namespace of its own, so the nodes and directives it registers do not outlive it
    # (a later Sphinx app in the same process would warn that they are registered already)
    with docutils_namespace():
        app = Sphinx(src, src, out, doctrees, "html", confoverrides=overrides, status=None, warning=warnings)
        app.build()
    return out, warnings.getvalue()


def signature(html: str, entry: str) -> str:
    """The signature of ``entry`` as it reads on the page (its HTML)."""
    match = re.search(rf'<dt class="sig sig-object py" id="{re.escape(entry)}">(.*?)</dt>', html, re.S)
    assert match, f"no entry {entry}"
    return match.group(1)


def text(html: str) -> str:
    """What ``html`` reads as (its arrow as ``->``, without the link marks)."""
    plain = unescape(re.sub(r"<[^>]+>", "", html)).replace("\u2192", "->").rstrip("¶#")
    return re.sub(r"\s+", " ", plain).strip()


def test_a_page_shows_array_like_by_its_name_linked_to_numpy_and_warns_of_a_name_on_no_page(tmp_path):
    pages = {
        "loss": ".. ntpnb-api:: ntpnb.linear._loss\n   :public: ntpnb",
        "training": ".. ntpnb-api:: ntpnb.linear._decoder_training\n   :public: ntpnb",
        "again": ".. ntpnb-api:: ntpnb.linear._loss\n   :public: ntpnb\n   :no-docstring:",
        "optim": ".. ntpnb-api:: ntpnb._optim\n   :public: ntpnb.optim",
        "maps": ".. ntpnb-api:: ntpnb.explore._results\n   :public: ntpnb.explore",
    }
    out, warnings = build(tmp_path, pages)
    loss = (out / "loss.html").read_text()
    softmax = signature(loss, "ntpnb.softmax")
    assert "_SupportsArray" not in softmax and "_NestedSequence" not in softmax
    assert text(softmax).startswith("ntpnb.softmax(L: ArrayLike) -> ndarray"), text(softmax)
    assert f'href="{NUMPY_TYPING}#numpy.typing.ArrayLike"' in softmax
    assert "The NTP cross-entropy loss" in loss  # the module's docstring opens its section
    # an alias inside a union keeps its name, and the other annotations are evaluated (short):
    # the package's internal aliases (ProgressHook) read as what they stand for
    train = text(signature((out / "training.html").read_text(), "ntpnb.train"))
    assert "W0: ArrayLike | None = None" in train and "seed: int | Generator = 0" in train, train
    assert "progress: Callable[[int, int], object] | None = None" in train, train
    # a dataclass field's default factory reads as its call, and the signature is parsed
    results = text(signature((out / "maps.html").read_text(), "ntpnb.explore.GridResults"))
    assert "fixed: Mapping[str, Any] = dict()" in results and "~" not in results, results
    # every page's names are checked against the public modules' __all__
    assert re.search(r"ntpnb\.softmax is documented on 2 API pages: again, loss", warnings), warnings
    assert "ntpnb.NTPData (defined in ntpnb.linear._ntp_data) is on no API page" in warnings
    assert "ntpnb.optim.gd" not in warnings and "ntpnb.train " not in warnings


def test_a_page_of_a_module_that_defines_no_public_name_is_an_error(tmp_path):
    _, warnings = build(tmp_path, {"empty": ".. ntpnb-api:: ntpnb.linear._gram_blocks\n   :public: ntpnb"})
    assert "ntpnb-api ntpnb.linear._gram_blocks: defines no name of ntpnb.__all__" in warnings
