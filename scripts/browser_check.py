"""Open the notebooks in a real JupyterLab in headless Chromium: every plot renders, explorers respond.

    pip install playwright            # the Python driver only; no browser download is needed:
    apt-get install chromium          # (or any Chromium/Chrome; pass --chromium PATH)
    python scripts/browser_check.py                     # all notebooks: static render check
    python scripts/browser_check.py --run 00_quickstart # also Run All in the browser and move the explorer

For each notebook (a copy in a temporary folder, opened by a JupyterLab server started here):
  * static: waits for the notebook to render and counts the images in the output areas against the
    image outputs stored in the .ipynb; every image must have decoded (naturalWidth > 0). Screenshot.
  * --run NAME: restarts the kernel and runs all cells from the browser, then finds the ipywidgets
    explorers, moves each slider / changes each dropdown, and checks that the HTML they show changed.
    Screenshots before and after.
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


def poke_widgets(page) -> list[dict]:
    """Drag every slider to its left end, change every dropdown, narrow every multi-select; report what changed."""
    results = []
    sliders = page.query_selector_all(".jp-OutputArea-output .widget-slider")
    for k, slider in enumerate(sliders):
        before = widget_text(page)
        slider.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        handle, track = slider.query_selector(".noUi-handle"), slider.query_selector(".noUi-target") or slider
        h, tb = handle.bounding_box(), track.bounding_box()
        page.mouse.move(h["x"] + h["width"] / 2, h["y"] + h["height"] / 2)  # drag the handle to the far left
        page.mouse.down()
        page.mouse.move(tb["x"] + 1, h["y"] + h["height"] / 2, steps=10)
        page.mouse.up()
        page.wait_for_timeout(1500)
        after = widget_text(page)
        results.append(dict(control=f"slider {k}", changed=before != after))
    for k, select in enumerate(page.query_selector_all(".jp-OutputArea-output .widget-dropdown select")):
        before = widget_text(page)
        options = select.evaluate("el => Array.from(el.options).map(o => o.value)")
        select.select_option(options[-1] if select.evaluate("el => el.value") != options[-1] else options[0])
        page.wait_for_timeout(800)
        results.append(dict(control=f"dropdown {k}", changed=before != widget_text(page)))
    for k, select in enumerate(page.query_selector_all(".jp-OutputArea-output .widget-select-multiple select")):
        before = widget_text(page)
        options = select.evaluate("el => Array.from(el.options).map(o => o.value)")
        select.scroll_into_view_if_needed()
        select.select_option(options[:1])  # keep only the first agent
        page.wait_for_timeout(800)
        results.append(dict(control=f"multi-select {k}", changed=before != widget_text(page)))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notebooks", nargs="*", default=None, help="names without .ipynb (default: all)")
    ap.add_argument("--run", nargs="*", default=[], help="notebooks to Run All in the browser and poke widgets")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "browser_check"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds for one Run All")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    names = args.notebooks or sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = dict(date=time.strftime("%Y-%m-%d %H:%M %Z"), chromium=args.chromium, notebooks={})
    with tempfile.TemporaryDirectory() as tmp:
        folder, settings = Path(tmp) / "nb", Path(tmp) / "settings"
        shutil.copytree(ROOT / "notebooks", folder)
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
           if r["decoded_images"] != r["stored_images"] or any(not p["changed"] for p in r.get("pokes", []))]
    print("problems:", bad or "none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
