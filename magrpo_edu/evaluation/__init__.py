"""Evaluation: every way the team is measured on held-out rows, in one place.

    team.py       `evaluate_team`: G aligned joint answers a row with the training's sampling, the first turn; the
                  mean joint reward, its components, each agent's text quality. The trainer's evaluations (before,
                  halfway, after: `MAGRPOTrainer.evaluate`), `magrpo-edu eval`. `answer_snapshot`: one joint answer a
                  row at a fixed seed, for a before/after picture.
    protocols.py  the paper's prompt-level protocols (single, parallel, sequential, discussion; magrpo and two-turn
                  magrpo for trained agents): `run_method`, one comparison-table row a method, scored by the task;
                  `row_from_evaluation`: the parallel and magrpo rows built from an `evaluate_team` draw, so the
                  table's figure for those rows IS the evaluation's.
    table.py      `markdown_table`: the comparison as markdown.

Two draws of the parallel protocol exist on purpose: `evaluate_team` samples every agent's G answers to one row in
one call (as a training step does), `run_method` each agent's answers to all rows (as the paper's baselines are
run); a table built by `magrpo-edu train` takes its parallel and magrpo rows from the first, so the table and the
evaluation never disagree. Every function restores the global RNG afterwards.
"""
from .protocols import (METHODS, char_ratio, row_from_evaluation, run_method,  # noqa: F401
                        untrained_methods)
from .table import NOT_COLUMNS, markdown_table  # noqa: F401
from .team import EVAL_SEED, answer_snapshot, evaluate_team  # noqa: F401
