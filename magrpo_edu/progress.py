"""Progress bars that read as finished in a saved notebook.

`tqdm.auto` draws a widget in Jupyter, and a notebook saved without widget state (as GitHub, nbviewer
and a fresh Binder show it) keeps only the widget's first text, `MAGRPO:   0%|  | 0/300`. Inside an
IPython kernel, `progress_bar` is instead tqdm's plain text bar drawn into ONE display output that each
refresh replaces (IPython's display handle, `update_display_data`), so the saved notebook holds the
bar's last state, `MAGRPO: 100%|##########| 300/300 [01:35<00:00, ...]`. Outside a kernel it is
`tqdm.auto`'s bar, unchanged. `quiet_model_loading` silences transformers' own "Loading weights" bar,
which a notebook would otherwise save at 0%.
"""
from __future__ import annotations

import contextlib
import io

from tqdm.auto import tqdm as _auto_tqdm
from tqdm.std import tqdm as _text_tqdm

__all__ = ["progress_bar", "quiet_model_loading"]


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class _DisplayBar(_text_tqdm):
    """tqdm's text bar, shown as one notebook output that every refresh overwrites."""

    def __init__(self, *args, **kwargs):
        self._handle = None
        kwargs["file"] = io.StringIO()  # tqdm's own writes (the closing newline) go nowhere
        kwargs.pop("dynamic_ncols", None)
        kwargs.setdefault("ncols", 100)
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None):  # noqa: D102 (tqdm's hook)
        from IPython.display import display

        text = {"text/plain": self.__str__() if msg is None else msg}
        if self._handle is None:
            self._handle = display(text, raw=True, display_id=True)
        else:
            self._handle.update(text, raw=True)
        return True


def progress_bar(*args, **kwargs):
    """A tqdm bar (same arguments): a text bar whose last state is saved in a notebook, tqdm.auto elsewhere."""
    if _in_kernel() and not kwargs.get("disable", False):
        return _DisplayBar(*args, **kwargs)
    return _auto_tqdm(*args, **kwargs)


progress_bar.write = _auto_tqdm.write  # tqdm.write: print a line without breaking a bar


@contextlib.contextmanager
def quiet_model_loading():
    """Turn transformers' progress bars off while a model loads (and back on after, if they were on)."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
