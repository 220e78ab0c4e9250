"""The run: everything `magrpo-edu train` and `eval` need around the algorithm, apart from it.

    cli.py          the command line (`magrpo-edu train / eval / pretrain / pretrain-code / info`)
    plan.py         every setting checked, and the run's plan, before a model loads
    device.py       the run's device: the default for its model, a given one checked
    folders.py      the output folder (what a run writes, its checks) and the checkpoint to resume or evaluate
    describe.py     the plan in words: what `magrpo-edu train` prints first
    estimate.py     a CPU run's expected training time, scaled from a measured run
    experiment.py   build, train and evaluate a run (`run_training`, `run_eval`)
    report.py       results.json, results.md, history and plots in the output folder
    figures.py      the plots (notebooks and reports)
    explorers.py    the notebooks' ipywidgets explorers
"""
