"""Jupyter server settings for Binder (repo2docker copies the repository to $HOME).

Jupytext's contents manager opens the MyST sources notebooks/*.md as notebooks.
"""

c = get_config()  # noqa: F821
c.ServerApp.contents_manager_class = "jupytext.TextFileContentsManager"
