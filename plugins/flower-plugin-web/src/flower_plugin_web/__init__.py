"""flower-plugin-web: follow and answer a flower run from a browser.

``flower web "make X"`` runs the main job with a page (on a fresh loopback address): the
steps and rounds, the judge's verdicts, cost, the context level against the handoff
point, retry and offline countdowns, a live event stream, pending questions with their
options, the inbox, side questions, and the brief, goal and handoff documents.
Everything goes through flower's public hooks (``plugin.py``).
"""

__version__ = "0.1.0"
