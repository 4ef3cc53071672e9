"""A figure's phone layout in the book: found by its image's bytes, written beside it, in a <picture>."""

from __future__ import annotations

import base64
import hashlib
import io
import re

import pytest
from docutils import nodes
from PIL import Image

from ntpnb.book._pictures import picture_of, recorded_outputs
from ntpnb.chapter._plotting import PHONE_MEDIA, PHONE_PIXELS, PHONE_RECORD


def _png(width: int, height: int, colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


WIDE, PHONE = _png(450, 300, "white"), _png(513, 900, "black")
RECORD = {
    "text_points": 9.5,
    "width_points": 216.0,
    "phone": {
        "image/png": base64.b64encode(PHONE).decode("ascii"),
        "text_points": 9.5,
        "width_points": 246.24,
        "shown_pixels": PHONE_PIXELS,
        "media": PHONE_MEDIA,
    },
}


def _notebook(record: dict) -> dict:
    output = {
        "output_type": "display_data",
        "data": {"image/png": base64.b64encode(WIDE).decode("ascii"), "text/plain": "<Image>"},
        "metadata": {"image/png": {"width": 300}, PHONE_RECORD: record},
    }
    plain = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}}
    return {"cells": [{"cell_type": "code", "outputs": [output, plain]}, {"cell_type": "markdown"}]}


def test_a_notebooks_records_are_found_by_the_sha256_of_their_image():
    found = recorded_outputs(_notebook(RECORD))
    assert found == {hashlib.sha256(WIDE).hexdigest(): RECORD}  # the unrecorded image is not


def test_the_picture_holds_the_image_and_its_phone_layout_written_beside_it(tmp_path):
    name = hashlib.sha256(WIDE).hexdigest()
    image = nodes.image(uri=f"/_build/jupyter_execute/{name}.png", alt="Four panels", width="300")
    node = picture_of(image, RECORD, tmp_path)
    wide, phone = node.children
    assert wide["uri"] == image["uri"] and "no-scaled-link" in wide["classes"] and node["linked"]
    written = tmp_path / "_build" / "jupyter_execute" / f"{hashlib.sha256(PHONE).hexdigest()}.png"
    assert written.read_bytes() == PHONE
    assert phone["uri"] == f"/_build/jupyter_execute/{written.name}" and phone["alt"] == "Four panels"
    assert node["media"] == PHONE_MEDIA and node["density"] == pytest.approx(513 / PHONE_PIXELS)
    assert node["record"] == {"text_points": 9.5, "width_points": 216.0}
    assert node["phone_record"] == {"text_points": 9.5, "width_points": 246.24}
    alone = picture_of(image, {"text_points": 12.0, "width_points": 216.0}, tmp_path)
    assert len(alone.children) == 1 and "no-scaled-link" not in alone.children[0]["classes"]


@pytest.mark.parametrize("builder", ["html", "text"])
def test_html_shows_the_phone_layout_as_a_source_and_other_builders_show_the_image(tmp_path, builder):
    from sphinx.testing.util import SphinxTestApp

    source = tmp_path / "src"
    source.mkdir()
    (source / "wide.png").write_bytes(WIDE)
    figure = ".. figure:: wide.png\n   :width: 300px\n   :alt: Four panels\n\n   The caption.\n"
    (source / "index.rst").write_text(f"Figures\n=======\n\n{figure}")
    (source / "conf.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
        "extensions = ['ntpnb.book._pictures', 'as_picture']\n"
    )
    # the notebooks' step, given this page's image and the record
    (source / "as_picture.py").write_text(
        "from pathlib import Path\nfrom docutils import nodes\n"
        "from ntpnb.book._pictures import picture_of\n"
        f"RECORD = {RECORD!r}\n"
        "def wrap(app, doctree):\n"
        "    for image in list(doctree.findall(nodes.image)):\n"
        "        image.replace_self(picture_of(image, RECORD, Path(app.srcdir)))\n"
        "def setup(app):\n    app.connect('doctree-read', wrap, priority=400)\n"
    )
    app = SphinxTestApp(builder, srcdir=source, builddir=tmp_path / "_build", warningiserror=True)
    try:
        app.build()
    finally:
        app.cleanup()  # the nodes and settings Sphinx registers, for the next build of the process
    out = app.outdir
    if builder == "text":
        assert "The caption." in (out / "index.txt").read_text()
        return
    page = (out / "index.html").read_text()
    figure = re.search(r"<figure.*?</figure>", page, re.S).group(0)
    phone = hashlib.sha256(PHONE).hexdigest()
    assert re.search(
        r'<a class="reference internal image-reference" href="_images/wide.png">'
        r'<picture class="ntpnb-picture" data-text-points="9.5" data-width-points="216">'
        rf'<source media="{re.escape(PHONE_MEDIA)}" srcset="_images/{phone}.png 1.5x" '
        r'data-text-points="9.5" data-width-points="246.24">'
        r'<img alt="Four panels" src="_images/wide.png" style="width: 300px;" />\s*</picture></a>',
        figure,
    ), figure
    assert (out / "_images" / f"{phone}.png").read_bytes() == PHONE
    assert "ntpnb-figures.css" in page and "no-scaled-link" not in page
