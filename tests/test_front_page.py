"""The README is a front page: short, and its two commands (install and run the main job; install and run
the whole test suite) on the first screen, the fast lane named beside them, the CPU wheel before CI's pin."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FIRST_SCREEN = "\n".join(README.splitlines()[:40])


def test_the_readme_is_short():
    words = len(README.split())  # as `wc -w` counts; the limit was 1500 until the learner's path (issue 61)
    assert words < 1550, f"the README has {words} words; move detail to docs/ (docs/contributing.md lists the pages)"


def test_both_commands_and_the_fast_lane_are_on_the_first_screen():
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu && pip install . && magrpo-edu train" \
        in FIRST_SCREEN
    ci = (ROOT / ".ci" / "run").read_text()
    ci_cmd = next(line for line in ci.splitlines() if line.startswith("pytest "))
    assert f"OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 {ci_cmd}" in FIRST_SCREEN
    assert 'pytest -m "not slow" tests' in FIRST_SCREEN and "fast lane" in FIRST_SCREEN


def test_the_cpu_wheel_comes_before_the_pin():
    assert README.index("download.pytorch.org/whl/cpu") < README.index("torch==2.13.0")
