/*
 * ntpnb's JupyterLab extension (./run.sh lab, Binder): a chapter's source is read-only there
 * (ntpnb.lab), and a reader keeps an edited chapter with File > Save Notebook As…
 *
 * - The File menu names a chapter "Notebook" ("Save Notebook As…", as the README and the server's
 *   messages say): jupytext registers its MyST notebooks without a display name, which JupyterLab
 *   then shows as "default".
 * - Save Notebook As… of a read-only chapter proposes my-notebooks/<chapter>.md, the reader's
 *   folder, instead of the chapter's own path.
 * - Once the copy is saved, the chapter's tab is closed without asking to save what is now in the
 *   copy, which JupyterLab opens in its place.
 *
 * It is a prebuilt extension of its own, loaded from .jupyter/labextensions
 * (c.LabApp.extra_labextensions_path in .jupyter/jupyter_server_config.py). JupyterLab loads a
 * prebuilt extension as a module federation container, window._JUPYTERLAB[name] with init() and
 * get(module); this one needs no shared module (only the application object), so the container is
 * written here, not built.
 */
(function () {
  "use strict";

  /** The folder of a project where a reader's copies of the chapters go (ntpnb.lab). */
  const COPIES = "my-notebooks";

  /** Whether a document is a chapter's source: notebooks/<name>.md, read-only. */
  function isChapter(context) {
    const path = context.path;
    const writable = context.contentsModel ? context.contentsModel.writable : true;
    return /(^|\/)notebooks\/[^/]+\.md$/.test(path) && writable === false;
  }

  /** my-notebooks/<name>.md beside notebooks/, for the chapter at ``path``. */
  function copyPath(path) {
    return path.replace(/(^|\/)notebooks\/([^/]+\.md)$/, `$1${COPIES}/$2`);
  }

  /** Fill the Save As dialog that opens for ``path`` with ``proposed`` (its name selected). */
  function propose(path, proposed) {
    const fill = () => {
      for (const input of document.querySelectorAll(".jp-Dialog input")) {
        if (input.value === path) {
          input.value = proposed;
          const name = proposed.lastIndexOf("/") + 1;
          input.setSelectionRange(name, proposed.lastIndexOf("."));
          return true;
        }
      }
      return false;
    };
    if (fill()) return;
    const watcher = new MutationObserver(() => fill() && watcher.disconnect());
    watcher.observe(document.body, { childList: true, subtree: true });
    setTimeout(() => watcher.disconnect(), 30000);
  }

  const plugin = {
    id: "ntpnb-lab:plugin",
    description: "The File menu says Notebook; Save Notebook As… of a chapter proposes my-notebooks/.",
    autoStart: true,
    activate: (app) => {
      let saving = null; // the chapter being saved as a copy
      app.restored.then(() => {
        for (const type of app.docRegistry.fileTypes()) {
          if (type.contentType === "notebook" && (!type.displayName || type.displayName === "default")) {
            type.displayName = "Notebook";
          }
        }
      });
      app.commands.commandExecuted.connect((_, executed) => {
        const widget = app.shell.currentWidget;
        const context = widget && widget.context;
        if (executed.id !== "docmanager:save-as" || !context || !isChapter(context)) return;
        saving = context;
        propose(context.path, copyPath(context.path));
      });
      // connected before JupyterLab's own handler of a Save As, which closes the chapter's tab:
      // its changes are in the copy now, so it closes without asking to save them
      app.serviceManager.contents.fileChanged.connect((_, change) => {
        const saved = change.type === "save" && change.newValue ? change.newValue.path : null;
        if (saving && saved && saved !== saving.path) {
          saving.model.dirty = false;
          saving = null;
        }
      });
    },
  };

  const scope = (window._JUPYTERLAB = window._JUPYTERLAB || {});
  scope["ntpnb-lab"] = {
    init: () => Promise.resolve(),
    get: (module) =>
      module === "./extension"
        ? Promise.resolve(() => ({ __esModule: true, default: plugin }))
        : Promise.reject(new Error(`ntpnb-lab has no module ${module}`)),
  };
})();
