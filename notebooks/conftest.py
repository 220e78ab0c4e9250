"""pytest --nbval-lax runs the notebooks with the reference solutions of their exercises: the kernels
nbval starts inherit this variable, and `magrpo_edu.exercises.check` then replaces an unsolved stub by
its solution (tests/test_exercises.py checks that each stub fails and each solution passes)."""
import os

os.environ["MAGRPO_EDU_SOLUTIONS"] = "1"
