"""Jupyter server settings of the project: ./run.sh lab, and Binder (which copies the repository to $HOME).

Jupytext's contents manager opens the MyST sources notebooks/*.md as notebooks; ntpnb's keeps them
read-only, so that a save never changes what the book runs (a reader's copy goes to my-notebooks/).
ntpnb's own JupyterLab extension (labextensions/ntpnb-lab beside this file) names them notebooks
in the File menu and proposes my-notebooks/ to Save Notebook As….
"""

from pathlib import Path

c = get_config()  # noqa: F821
c.ServerApp.contents_manager_class = "ntpnb.lab.ChapterContentsManager"
c.LabApp.extra_labextensions_path = [str(Path(__file__).resolve().parent / "labextensions")]
