"""A progress bar saved in a notebook reads as finished (magrpo_edu.progress), not `0%| 0/N`."""
import nbformat
import pytest
from nbclient import NotebookClient

from magrpo_edu.progress import _DisplayBar, progress_bar


def test_outside_a_kernel_the_bar_is_tqdm_auto():
    bar = progress_bar(total=3, disable=True)
    assert not isinstance(bar, _DisplayBar)
    bar.close()


@pytest.mark.slow
def test_a_saved_notebook_holds_the_last_state_of_the_bar():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from magrpo_edu.progress import progress_bar\n"
        "bar = progress_bar(total=50, desc='MAGRPO', mininterval=0)\n"
        "for i in range(50):\n"
        "    bar.update(1); bar.set_postfix(reward=f'{i / 50:.3f}')\n"
        "bar.close()\n"
        "print('done')")])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    bars = [o for o in outputs if o.output_type == "display_data"]
    assert len(bars) == 1, outputs                       # one output, overwritten at each refresh
    text = bars[0].data["text/plain"]
    assert text.startswith("MAGRPO: 100%") and "50/50" in text and "reward=0.980" in text, text
    assert not any(o.output_type == "stream" and o.name == "stderr" for o in outputs)
