"""The page: one static HTML document and one script (``static/``), no build step.

The HTML is a shell with no data of the run in it (it is served without the token: the
browser cannot send the token before the script has read it from the URL's fragment);
everything else comes from the script's requests, which carry the token. Text that came
from the model, the tools or the files is never executed: the script only assigns
``textContent``, but for documents, which the server renders inert (``render.py``).
"""

from __future__ import annotations

from importlib import resources


def _static(name: str) -> str:
    return (resources.files("flower_plugin_web") / "static" / name).read_text(encoding="utf-8")


#: The page and its one script (``static/``: plain files, no build step).
PAGE = _static("page.html")
SCRIPT = _static("page.js")
