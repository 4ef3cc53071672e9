"""Jupyter server settings of the project: ./run.sh lab, and Binder (which copies the repository to $HOME).

Jupytext's contents manager opens the MyST sources notebooks/*.md as notebooks; ntpnb's keeps them
read-only, so that a save never changes what the book runs (a reader's copy goes to my-notebooks/).
"""

c = get_config()  # noqa: F821
c.ServerApp.contents_manager_class = "ntpnb.lab.ChapterContentsManager"
