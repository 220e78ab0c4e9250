"""Open the notebooks in a real JupyterLab in headless Chromium: every plot renders, explorers respond.

    pip install playwright            # the Python driver only; no browser download is needed:
    apt-get install chromium          # (or any Chromium/Chrome; pass --chromium PATH)
    python tools/browser_check.py                     # all notebooks: static render check
    python tools/browser_check.py --run 00_quickstart # also Run All in the browser and move the explorer
    python tools/browser_check.py --notebooks --explorers  # only the explorers, on a small built notebook

For each notebook (a copy in a temporary folder, opened by a JupyterLab server started here):
  * static: waits for the notebook to render and counts the images in the output areas against the
    image outputs stored in the .ipynb; every image must have decoded (naturalWidth > 0). Screenshot.
  * --run NAME: restarts the kernel and runs all cells from the browser, then finds the ipywidgets
    explorers, moves each slider / changes each dropdown, and checks that the HTML they show changed.
    Screenshots before and after.
  * --explorers: writes a small notebook (`explorers_check.ipynb`, in the temporary folder) that builds
    every explorer of magrpo_edu.viz from made-up data in seconds (group, before/after, coding,
    rollout tree), runs it in the browser and moves every control of every explorer, reporting per
    explorer which controls changed what it shows.
  * every notebook, statically: each saved widget output must carry a "text/html" copy (what GitHub
    and nbviewer show without a kernel); `widgets_without_static` counts those that do not.
Writes docs/browser_check/<notebook>*.png and docs/browser_check/report.json. A developer's check
(needs a browser), not part of CI.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "magrpo-edu-check"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(folder: Path, port: int, settings: Path) -> subprocess.Popen:
    # Render every cell (no virtual scrolling), so all outputs exist in the page at once.
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", f"--port={port}",
           f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={folder}", f"--LabApp.user_settings_dir={settings}",
           "--ServerApp.disable_check_xsrf=True"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(120):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("JupyterLab did not start: " + proc.stderr.read().decode()[-2000:])


def stored_images(nb_path: Path) -> int:
    nb = json.loads(nb_path.read_text())
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if "image/png" in o.get("data", {}))


def static_fallbacks(nb_path: Path) -> tuple[int, int]:
    """(saved widget outputs, those without a text/html copy): GitHub and nbviewer draw no widget."""
    nb = json.loads(nb_path.read_text())
    outs = [o.get("data", {}) for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    widgets = [d for d in outs if "application/vnd.jupyter.widget-view+json" in d]
    return len(widgets), sum(1 for d in widgets if "text/html" not in d)


EXPLORERS_NOTEBOOK = [
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\nimport torch\n"
    "from magrpo_edu import viz\nfrom magrpo_edu.algorithm import Node, Rollout, assign_advantages, joint_actions\n"
    "from magrpo_edu.config import MAGRPOConfig\nfrom magrpo_edu.tasks.coding.explorer import coding_explorer, coding_sample",
    # the group explorer: 3 logged groups of 2 agents, different texts and rewards
    "samples = [dict(step=s, completions=[[f'a{s}-{g}' for g in range(4)], [f'b{s}-{g}' for g in range(4)]],\n"
    "                table=[[g, g] for g in range(4)], rewards=[0.1 * s * g for g in range(4)],\n"
    "                advantages=[0.1 * s * (g - 1.5) for g in range(4)]) for s in range(1, 4)]\n"
    "viz.group_explorer(samples)",
    "viz.before_after_explorer(['post 0', 'post 1'], [['b0', 'c0'], ['b1', 'c1']], [['a0', 'd0'], ['a1', 'd1']], [0.1, 0.2], [0.9, 0.8])",
    "def lv(passed, calls):\n"
    "    return dict(aux_defined=0.4, main_defined=0.6, syntax=0.5, tests=passed / 4, calls_aux=0.5 * calls,\n"
    "                not_thin_wrapper=1.0 * calls, aux_result_ignored=0.0, passed=passed, total=4, total_reward=1.5 + passed / 4 + 1.5 * calls)\n"
    "groups = [coding_sample(['def aux(x):\\n    return x + %d' % s, 'def aux(x):\\n    return 0'],\n"
    "                            ['def f(x):\\n    return aux(x) * %d' % s, 'def f(x):\\n    return 7'], [lv(4, True), lv(s % 4, False)], step=s)\n"
    "          for s in range(3)]\n"
    "coding_explorer(groups)",
    "table = joint_actions(2, 2)\n"
    "root = Node(0, ['p1', 'p2'], [[], []], completions=[['a', 'b'], ['c', 'd']], table=table, rewards=torch.tensor([1.0, 0.0]))\n"
    "kids = [Node(1, [f'feedback {j}', 'q'], [[], []], completions=[[f'e{j}', 'f'], ['g', 'h']], table=table,\n"
    "             rewards=torch.tensor([0.5, 2.0 + j])) for j in range(2)]\n"
    "root.children = dict(enumerate(kids))\n"
    "ro = Rollout(root=root, levels=[[root], kids], completions=[])\n"
    "assign_advantages(ro, MAGRPOConfig(num_generations=2))\n"
    "viz.rollout_explorer(ro)",
]


def write_explorers_notebook(folder: Path) -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in EXPLORERS_NOTEBOOK]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "explorers_check.ipynb")
    return "explorers_check"


def open_notebook(page, port: int, name: str):
    page.goto(f"http://127.0.0.1:{port}/lab/workspaces/{name}/tree/{name}.ipynb?reset&token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
    page.wait_for_timeout(3000)


def images_ok(page) -> tuple[int, int]:
    imgs = page.query_selector_all(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img")
    decoded = sum(1 for i in imgs if i.evaluate("el => el.complete && el.naturalWidth > 0"))
    return len(imgs), decoded


def shoot(page, out: Path):
    height = max(e.evaluate("el => el.scrollHeight") for e in page.query_selector_all(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook, .jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"))
    page.set_viewport_size({"width": 1280, "height": min(max(900, height + 200), 30000)})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(out), full_page=True)


def widget_text(page) -> list[str]:
    return [e.inner_text() for e in page.query_selector_all(".jp-OutputArea-output .widget-html-content")]


def run_all(page, timeout_s: int):
    page.keyboard.press("Escape")
    page.click("text=Run", timeout=10_000)  # the Run menu
    page.click("text=Restart Kernel and Run All Cells…", timeout=10_000)
    for label in ("Confirm Kernel Restart", "Restart"):
        btn = page.query_selector(f"button.jp-mod-accept:has-text('{label}')")
        if btn:
            btn.click()
            break
    t = time.time()
    page.wait_for_timeout(5000)
    while time.time() - t < timeout_s:
        busy = page.query_selector_all(".jp-InputArea-prompt:has-text('[*]')")
        if not busy:
            return time.time() - t
        page.wait_for_timeout(2000)
    raise TimeoutError(f"cells still running after {timeout_s} s")


def _move_slider(page, slider) -> None:
    """Drag the handle to the far left; where the drag does not register (continuous_update=False
    sends the value only on the slider's change event), type 0 into the editable readout."""
    slider.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    handle, track = slider.query_selector(".noUi-handle"), slider.query_selector(".noUi-target") or slider
    h, tb = handle.bounding_box(), track.bounding_box()
    page.mouse.move(h["x"] + h["width"] / 2, h["y"] + h["height"] / 2)
    page.mouse.down()
    page.mouse.move(tb["x"] + 1, h["y"] + h["height"] / 2, steps=10)
    page.mouse.up()
    page.wait_for_timeout(1500)


def _type_into_readout(page, slider, value: str) -> None:
    readout = slider.query_selector(".widget-readout")
    if readout is None:
        return
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.keyboard.press("Enter")
    page.wait_for_timeout(1500)


def poke_widgets(page) -> list[dict]:
    """For every explorer (an output area holding widgets): drag every slider to its left end (or type
    0 into its readout), change every dropdown, narrow every multi-select; report, per explorer and
    control, whether the HTML that explorer shows changed."""
    results = []
    outputs = [o for o in page.query_selector_all(".jp-OutputArea-output") if o.query_selector(".widget-box")]
    for e, out in enumerate(outputs):
        def shown():
            return [x.inner_text() for x in out.query_selector_all(".widget-html-content")]
        for k, slider in enumerate(out.query_selector_all(".widget-slider")):
            before = shown()
            _move_slider(page, slider)
            how = "drag"
            if shown() == before:
                _type_into_readout(page, slider, "0")
                how = "readout"
            results.append(dict(explorer=e, control=f"slider {k} ({how})", changed=before != shown()))
        for k, select in enumerate(out.query_selector_all(".widget-dropdown select")):
            before = shown()
            options = select.evaluate("el => Array.from(el.options).map(o => o.value)")
            select.scroll_into_view_if_needed()
            select.select_option(options[-1] if select.evaluate("el => el.value") != options[-1] else options[0])
            page.wait_for_timeout(800)
            results.append(dict(explorer=e, control=f"dropdown {k}", changed=before != shown()))
        for k, select in enumerate(out.query_selector_all(".widget-select-multiple select")):
            before = shown()
            options = select.evaluate("el => Array.from(el.options).map(o => o.value)")
            select.scroll_into_view_if_needed()
            select.select_option(options[:1])  # keep only the first agent
            page.wait_for_timeout(800)
            results.append(dict(explorer=e, control=f"multi-select {k}", changed=before != shown()))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notebooks", nargs="*", default=None, help="names without .ipynb (default: all; none: give it no name)")
    ap.add_argument("--explorers", action="store_true", help="also run a small built notebook with every explorer and poke them")
    ap.add_argument("--run", nargs="*", default=[], help="notebooks to Run All in the browser and poke widgets")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "browser_check"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds for one Run All")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    names = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")) if args.notebooks is None else args.notebooks
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = dict(date=time.strftime("%Y-%m-%d %H:%M %Z"), chromium=args.chromium, notebooks={})
    with tempfile.TemporaryDirectory() as tmp:
        folder, settings = Path(tmp) / "nb", Path(tmp) / "settings"
        shutil.copytree(ROOT / "notebooks", folder)
        if args.explorers:
            args.run.append(write_explorers_notebook(folder))
        port = free_port()
        env_before = dict(os.environ)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        lab = start_lab(folder, port, settings)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
                report["chromium_version"] = browser.version
                for name in names + [n for n in args.run if n not in names]:
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    open_notebook(page, port, name)
                    rec = dict(stored_images=stored_images(folder / f"{name}.ipynb"))
                    rec["saved_widgets"], rec["widgets_without_static"] = static_fallbacks(folder / f"{name}.ipynb")
                    rec["rendered_images"], rec["decoded_images"] = images_ok(page)
                    shoot(page, out / f"{name}.png")
                    if name in args.run:
                        page.set_viewport_size({"width": 1280, "height": 900})
                        rec["run_all_seconds"] = round(run_all(page, args.timeout), 1)
                        rec["errors"] = len(page.query_selector_all(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] :text('Traceback')"))
                        rec["widgets"] = len(page.query_selector_all(".jp-OutputArea-output .widget-box, .jp-OutputArea-output .jupyter-widgets"))
                        rec["after_run_images"], rec["after_run_decoded"] = images_ok(page)
                        rec["pokes"] = poke_widgets(page)
                        shoot(page, out / f"{name}-run.png")
                    report["notebooks"][name] = rec
                    print(name, json.dumps(rec), flush=True)
                    page.close()
                browser.close()
        finally:
            lab.terminate()
            os.environ.clear()
            os.environ.update(env_before)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    bad = [n for n, r in report["notebooks"].items()
           if r["decoded_images"] != r["stored_images"] or r["widgets_without_static"]
           or any(not p["changed"] for p in r.get("pokes", []))]
    print("problems:", bad or "none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
