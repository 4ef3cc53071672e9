"""A chapter's figures on a phone: each figure one ``<picture>``, its phone layout a ``<source>``.

:func:`~ntpnb.chapter._plotting.show_figure` records, in a shown figure's output metadata
(:data:`~ntpnb.chapter._plotting.PHONE_RECORD`), the smallest text of the image and, where that
text would be too small on a phone, the figure re-laid in one column. When a notebook is read,
each image that myst-nb made of such an output (named after the SHA-256 of its bytes) becomes a
:class:`picture`: the image as it is, and the phone layout written beside it, which the browser
shows in windows matching :data:`~ntpnb.chapter._plotting.PHONE_MEDIA`. The figure stays one
numbered, captioned figure with its alt text. The HTML::

    <a class="reference internal image-reference" href="WIDE">  (as Sphinx links a scaled image)
      <picture class="ntpnb-picture" data-text-points=".." data-width-points="..">
        <source media="PHONE_MEDIA" srcset="PHONE 1.5x" data-text-points=".." data-width-points="..">
        <img src="WIDE" ...>
      </picture>
    </a>

The ``data-`` attributes are the layouts' records (:func:`~ntpnb.chapter._plotting.figure_record`),
from which a page's test computes each figure's smallest text on screen. Other builders show
the image alone.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import urllib.parse
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from .._templates import render_inline
from ..chapter._plotting import PHONE_RECORD
from ..errors import PathError
from ._executed import read_notebook

#: Sphinx's class for an image it must not link to its full size (this module's HTML links it).
_NO_LINK = "no-scaled-link"


class picture(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """An image and, optionally, its phone layout: children ``[image]`` or ``[image, phone image]``.

    Attributes: ``record`` and ``phone_record`` (the layouts' records, without images),
    ``media`` (where the phone layout shows), ``density`` (the phone PNG's pixels per CSS
    pixel at the size it is shown), ``linked`` (whether the image links to its full size, as
    Sphinx links a scaled one).
    """


def recorded_outputs(notebook: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The records of a notebook's shown figures, by the SHA-256 (hex) of their PNG's bytes."""
    found = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get(PHONE_RECORD)
            png = output.get("data", {}).get("image/png")
            if isinstance(record, dict) and isinstance(png, str):
                found[hashlib.sha256(base64.b64decode(png)).hexdigest()] = record
    return found


def _layout_record(record: dict[str, Any]) -> dict[str, float]:
    """The numbers of a layout's record: its smallest text and its width, in points."""
    return {key: float(record[key]) for key in ("text_points", "width_points")}


def picture_of(image: nodes.image, record: dict[str, Any], srcdir: Path) -> picture:
    """The :class:`picture` of ``image`` (whose record is ``record``), its phone PNG written beside it.

    ``image["uri"]`` is myst-nb's: relative to ``srcdir`` after a leading ``/``.
    """
    node = picture(record=_layout_record(record), linked=_NO_LINK not in image["classes"])
    phone = record.get("phone")
    if not isinstance(phone, dict):
        node += image.deepcopy()
        return node
    data = base64.b64decode(phone["image/png"])
    name = hashlib.sha256(data).hexdigest() + ".png"
    folder = posixpath.dirname(image["uri"])
    path = srcdir / folder.lstrip("/") / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    node["phone_record"] = _layout_record(phone)
    node["media"] = str(phone["media"])
    node["density"] = int.from_bytes(data[16:20], "big") / float(phone["shown_pixels"])  # IHDR width
    wide = image.deepcopy()
    if _NO_LINK not in wide["classes"]:
        wide["classes"].append(_NO_LINK)  # this module's HTML links it, around the <picture>
    node += wide
    node += nodes.image(uri=posixpath.join(folder, name), alt=image.get("alt", ""))
    return node


def add_pictures(app: Sphinx, doctree: nodes.document) -> None:
    """Make each recorded figure image of an executed notebook a :class:`picture`."""
    path = Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    try:
        records = recorded_outputs(read_notebook(path))
    except PathError:
        return  # the notebook check reports it
    if not records:
        return
    for image in list(doctree.findall(nodes.image)):
        record = records.get(posixpath.splitext(posixpath.basename(image["uri"]))[0])
        if record is not None and not isinstance(image.parent, picture):
            image.replace_self(picture_of(image, record, Path(app.srcdir)))


def _image_uri(translator, uri: str) -> str:
    """Where the HTML page finds the image Sphinx copied from ``uri`` (as Sphinx's ``visit_image``)."""
    images = translator.builder.images
    if uri in images:
        return posixpath.join(translator.builder.imgpath, urllib.parse.quote(images[uri]))
    return uri


def visit_picture_html(translator, node: picture) -> None:
    """Write the ``<picture>`` (linked as Sphinx links a scaled image), its ``<source>`` and ``<img>``."""
    wide = node.children[0]
    linked = (
        node["linked"]
        and translator.config.html_scaled_image_link
        and translator.builder.html_scaled_image_link
        and any(key in wide for key in ("scale", "width", "height"))
    )
    phone = None
    if len(node.children) > 1:
        uri = _image_uri(translator, node.children[1]["uri"])
        phone = {
            "media": node["media"],
            "uri": uri,
            "density": node["density"],
            "record": node["phone_record"],
        }
    href = _image_uri(translator, wide["uri"]) if linked else None
    translator.body.append(render_inline("picture_open.html", href=href, record=node["record"], phone=phone))
    if node["linked"] and _NO_LINK in wide["classes"]:
        wide["classes"].remove(_NO_LINK)  # added by this module, so that Sphinx left it unlinked
    wide.walkabout(translator)
    translator.body.append(render_inline("picture_close.html", linked=linked))
    raise nodes.SkipNode


def depart_picture_html(translator, node: picture) -> None:
    """Nothing: :func:`visit_picture_html` writes the whole picture."""


class PictureFallback(SphinxPostTransform):
    """Outside HTML, a :class:`picture` is its image (the paper's figure)."""

    default_priority = 5  # after myst-nb selects the outputs' mime types (4)

    def run(self, **kwargs: Any) -> None:
        """Replace each picture by its image, unless the builder writes HTML."""
        if self.app.builder.format == "html":
            return
        for node in list(self.document.findall(picture)):
            wide = node.children[0]
            if node["linked"] and _NO_LINK in wide["classes"]:
                wide["classes"].remove(_NO_LINK)
            node.replace_self(wide)


def setup(app: Sphinx) -> None:
    """Register the node, its HTML, the transform of the notebooks' images and the stylesheet."""
    app.add_node(picture, html=(visit_picture_html, depart_picture_html))
    app.add_post_transform(PictureFallback)
    # before Sphinx's image collector (500) takes the images to copy
    app.connect("doctree-read", add_pictures, priority=400)
    app.add_css_file("ntpnb-figures.css")
