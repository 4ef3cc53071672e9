"""A minimal chapter for the runner's tests: a parameters cell and one code cell."""

from __future__ import annotations

_TEMPLATE = """\
---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
{title}
```{{code-cell}} ipython3
:tags: [parameters]

profile = "paper"
output_dir = None
{parameters}
```

```{{code-cell}} ipython3
{body}
```
"""


def fake_notebook(body: str, parameters: str = "", title: str = "") -> str:
    """A Jupytext (MyST) chapter whose parameters cell holds ``profile``, ``output_dir`` and
    ``parameters``, followed by one cell with ``body`` (and a ``# title`` heading if given)."""
    heading = f"\n# {title}\n" if title else ""
    return _TEMPLATE.format(title=heading, parameters=parameters, body=body)
