"""What every figure and explorer of the package shares, below the tasks that draw their own (the coding
task's explorer and PassOrNot@k figure live in tasks/coding/): the figure size and the `Explorer` base class.
ipywidgets is imported only when an explorer is built."""
from __future__ import annotations

FIGSIZE = (7.5, 3.6)
"""Every figure's size in inches (wide and short: a notebook's cell width)."""

# Every explorer is an `Explorer`: a VBox whose display bundle carries, beside ipywidgets' widget view,
# a "text/html" rendering of what the widget shows when it is displayed. In a running kernel, JupyterLab,
# Notebook 7 and Colab draw the live widget. A saved notebook has no widget state (tools/nbtools.py
# strips it, and with it the widget view from the saved output), so JupyterLab, Binder, GitHub,
# nbviewer and `jupyter nbconvert --to html` show the HTML instead of "model not found" or
# `VBox(children=...)`. Widget and fallback come from the same renderer (`group_html`,
# `coding_html`, `rollout_html`, `before_after_report`), so they cannot disagree.

_EXPLORER = None


def explorer_class():
    global _EXPLORER
    if _EXPLORER is None:
        import ipywidgets as W

        class Explorer(W.VBox):
            """A VBox whose saved output also shows `static_html()` where no widget can be drawn."""

            def __init__(self, children, static_html, **kwargs):
                super().__init__(children, **kwargs)
                self.static_html = static_html

            def _repr_mimebundle_(self, **kwargs):
                data = super()._repr_mimebundle_(**kwargs) or {}
                data["text/html"] = ("<p style='color:#555'><i>A static copy of the explorer as it was when the "
                                     "notebook ran; run the cell for its controls (they need a running kernel).</i></p>"
                                     + self.static_html())
                return data
        _EXPLORER = Explorer
    return _EXPLORER
