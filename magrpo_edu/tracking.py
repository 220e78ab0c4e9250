"""Run tracking, TRL's way: `config.report_to` sends the trainer's metrics to TensorBoard, Weights &
Biases or Trackio as well as to `trainer.history`.

    MAGRPOConfig(report_to="tensorboard", logging_dir="runs/tldr/tensorboard")
    tensorboard --logdir runs/tldr/tensorboard          # then open the "reward" curve

Each tracker is a `TrainerCallback` (the trainer adds it on the main process): every logged record
(`on_log`: the same numbers as the history, keyed by the same names, x-axis = optimiser step) and
every evaluation (`on_evaluate`: eval/reward, eval/naturalness/<agent>, ...). The packages are
optional extras; asking for one that is not installed raises `TrackerNotInstalledError`, naming the
package, before any model loads (`check_installed`).

Where we deviate from TRL / transformers' integrations, and why: those callbacks read the HF
Trainer's state and arguments, which `MAGRPOTrainer` does not have, so the three small adapters
below call the trackers' public APIs directly (`torch.utils.tensorboard.SummaryWriter`,
`wandb.init/log/finish`, `trackio.init/log/finish`). The metric names are ours (TRL's where TRL has
one, see magrpo_edu.records), without TRL's "train/" prefix.
"""
from __future__ import annotations

import atexit
import importlib.util
import time
from typing import Optional

EXTRAS = {"tensorboard": "tracking", "wandb": "wandb", "trackio": "trackio"}
"""Each tracker's pip extra of magrpo-edu (its package has the tracker's own name)."""
PROJECT = "magrpo-edu"


class TrackerNotInstalledError(ImportError):
    """config.report_to names a tracker whose package is not installed."""


def check_installed(trackers) -> None:
    """Raise TrackerNotInstalledError for the first tracker in `trackers` whose package is missing."""
    for name in trackers:
        if importlib.util.find_spec(name) is None:
            raise TrackerNotInstalledError(
                f"report_to={name!r} needs the {name!r} package, which is not installed: "
                f"pip install {name} (or pip install 'magrpo-edu[{EXTRAS[name]}]'), "
                "or leave report_to at 'none'.")


def _scalars(record: dict) -> dict:
    return {k: float(v) for k, v in record.items() if k != "step" and isinstance(v, (int, float))
            and not isinstance(v, bool)}


def default_logging_dir() -> str:
    """TRL's default shape: runs/<date-time>, one folder per run (tensorboard shows each as a line)."""
    return f"runs/magrpo-{time.strftime('%Y%m%d-%H%M%S')}"


class _Tracker:
    """A tracker is a duck-typed `TrainerCallback` (this module does not import the trainer, which
    calls only the hooks a callback has): evaluations are logged like the history's records."""

    def on_log(self, trainer, record):
        raise NotImplementedError

    def on_evaluate(self, trainer, metrics):
        self.on_log(trainer, metrics)


class TensorBoardCallback(_Tracker):
    """Scalars into tensorboard event files under `logging_dir` (`tensorboard --logdir DIR`)."""

    def __init__(self, logging_dir: Optional[str] = None, run_config: Optional[dict] = None):
        self.logging_dir = logging_dir or default_logging_dir()
        self.run_config, self.writer = run_config, None

    def _w(self):
        if self.writer is None:  # created at the first record, so a trainer that never trains writes nothing
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=self.logging_dir)
            if self.run_config:
                self.writer.add_text("config", "\n".join(f"    {k}: {v!r}" for k, v in self.run_config.items()))
        return self.writer

    def on_log(self, trainer, record):
        w = self._w()
        for k, v in _scalars(record).items():
            w.add_scalar(k, v, global_step=trainer.step)
        w.flush()  # every record is on disk at once: `tensorboard --logdir` shows a run while it trains


class ApiTrackerCallback(_Tracker):
    """wandb and trackio share one shape: init(project=, config=) / log(dict, step=) / finish()."""

    def __init__(self, module: str, run_config: Optional[dict] = None):
        self.module, self.run_config, self.run = module, run_config, None

    def _lib(self):
        lib = importlib.import_module(self.module)
        if self.run is None:  # started at the first record, finished when the program ends
            self.run = lib.init(project=PROJECT, config=dict(self.run_config or {}))
            atexit.register(self.finish)
        return lib

    def on_log(self, trainer, record):
        self._lib().log(_scalars(record), step=trainer.step)

    def finish(self):
        """End the tracker's run (at exit; call it yourself to end it sooner). Not at the end of train():
        the evaluation after training (`trainer.log_eval`) belongs to the same run."""
        if self.run is not None:
            importlib.import_module(self.module).finish()
            self.run = None


def make_callbacks(config, run_config: Optional[dict] = None) -> list:
    """One callback per tracker in config.report_to (none for "none"); `run_config` (default: the
    MAGRPOConfig) is stored with the run."""
    check_installed(config.trackers)
    run_config = run_config or config.to_dict()
    made = {"tensorboard": lambda: TensorBoardCallback(config.logging_dir, run_config),
            "wandb": lambda: ApiTrackerCallback("wandb", run_config),
            "trackio": lambda: ApiTrackerCallback("trackio", run_config)}
    return [made[name]() for name in config.trackers]
