"""Bad input gets a clear error naming the file, the line and the field, and what to do: data files
(encoding, empty files, null/empty/mistyped fields, entry points, lone surrogates), writing rows
given to the formatters, and prompts longer than the model's context."""
import json

import pytest

from magrpo_edu.resources import read_jsonl
from magrpo_edu.tasks.coding.data import FIELDS as CODING  # what load_coding requires, entry_point rule included
from magrpo_edu.tasks.writing import load_arxiv_hub, load_tldr_hub, tldr_formatters

GOOD_CODING = {"task_id": "t/1", "prompt": "def f(x):\n    pass\n", "entry_point": "f",
               "test": "def check(candidate):\n    assert candidate(1) == 1\n"}


def _jsonl(tmp_path, rows, name="rows.jsonl"):
    f = tmp_path / name
    f.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return f


def test_non_utf8_file_names_the_file_and_byte_offset(tmp_path):
    f = tmp_path / "latin.jsonl"
    f.write_bytes(b'{"id": "1", "post": "ok"}\n{"id": "2", "post": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"latin.jsonl: not UTF-8 text: byte 0xe9 at byte offset 50 \(line 2\)") as e:
        read_jsonl(f, required=("id", "post"))
    assert "Re-encode the file as UTF-8" in str(e.value)
    with pytest.raises(ValueError, match="byte offset 50"):  # the offline hub-format loaders too
        load_tldr_hub(path=str(f))


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"id": "1", "post": "ok"}\n')
    assert read_jsonl(f, required=("id", "post")) == [{"id": "1", "post": "ok"}]


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_files_say_so(tmp_path, text):
    f = tmp_path / "empty.jsonl"
    f.write_text(text)
    with pytest.raises(ValueError, match=r"empty.jsonl: no rows"):
        read_jsonl(f, required=("id", "post"))
    assert read_jsonl(f, allow_empty=True) == []
    for load in (lambda: load_tldr_hub(path=str(f)), lambda: load_arxiv_hub(str(f))):  # was StopIteration
        with pytest.raises(ValueError, match=r"empty.jsonl: no rows"):
            load()


@pytest.mark.parametrize("field, value, says", [
    ("test", None, r"line 2, field 'test': must be a non-empty string, got null"),
    ("prompt", 3, r"line 2, field 'prompt': must be a non-empty string, got a number"),
    ("prompt", "   ", r"line 2, field 'prompt': is blank"),
    ("entry_point", "", r"line 2, field 'entry_point': is empty"),
    ("entry_point", "my func", r"line 2, field 'entry_point': must be a Python identifier"),
    ("entry_point", ["f"], r"line 2, field 'entry_point': must be a non-empty string, got a list"),
])
def test_coding_rows_need_string_fields_and_an_identifier(tmp_path, field, value, says):
    f = _jsonl(tmp_path, [GOOD_CODING, GOOD_CODING | {field: value}], "coding.jsonl")
    with pytest.raises(ValueError, match=says) as e:
        read_jsonl(f, required=CODING)
    assert "coding.jsonl" in str(e.value)


def test_writing_row_with_null_post(tmp_path):
    f = _jsonl(tmp_path, [{"id": "1", "post": None}])
    with pytest.raises(ValueError, match=r"rows.jsonl, line 1, field 'post': must be a non-empty string, got null"):
        read_jsonl(f, required=("id", "post"))
    with pytest.raises(ValueError, match=r"rows.jsonl, line 1, field 'post'"):
        load_tldr_hub(path=str(f))
    with pytest.raises(ValueError, match=r"rows.jsonl, line 1, field 'abstract'"):
        load_arxiv_hub(str(_jsonl(tmp_path, [{"abstract": None}])))
    # rows handed straight to the formatters: no prompt that says "None"
    with pytest.raises(ValueError, match=r"writing row '7', field 'post': must be a non-empty string, got null"):
        tldr_formatters()[0]({"id": "7", "post": None})


def test_required_as_a_mapping_of_types(tmp_path):
    f = _jsonl(tmp_path, [{"id": 1, "post": "x", "score": 0.5}])
    assert read_jsonl(f, required={"id": int, "post": str, "score": (int, float)})[0]["id"] == 1
    with pytest.raises(ValueError, match=r"line 1, field 'id': must be a non-empty string, got a number"):
        read_jsonl(f, required=("id", "post"))
    with pytest.raises(ValueError, match=r"field 'score': must be a list, got a number"):
        read_jsonl(f, required={"score": list})


def test_lone_surrogates_are_rejected_with_the_position(tmp_path):
    f = _jsonl(tmp_path, ['{"id": "1", "post": "ok"}', '{"id": "2", "post": "smile \\ud83d here"}'])
    with pytest.raises(ValueError, match=r"rows.jsonl, line 2, field 'post': lone surrogate U\+D83D at character 6"):
        read_jsonl(f, required=("id", "post"))
    g = _jsonl(tmp_path, ['{"id": "1", "post": "ok", "meta": {"tags": ["a", "\\udc00"]}}'], "nested.jsonl")
    with pytest.raises(ValueError, match=r"field 'meta.tags\[1\]': lone surrogate U\+DC00 at character 0"):
        read_jsonl(g)
    ok = _jsonl(tmp_path, ['{"id": "1", "post": "smile \\ud83d\\ude00 here"}'], "pair.jsonl")  # a proper pair is fine
    assert read_jsonl(ok, required=("id", "post"))[0]["post"] == "smile \U0001F600 here"


def test_load_rows_names_lines_and_stops_at_the_limit(tmp_path):
    from magrpo_edu.resources import load_rows

    f = _jsonl(tmp_path, ['{"a": "x"}', "", '{"a": "y"}', '{"a": null}'])
    assert [w for w, _ in load_rows(str(f), limit=2, required=("a",))] == [f"{f}, line 1", f"{f}, line 3"]
    with pytest.raises(ValueError, match=r"line 4, field 'a'"):
        list(load_rows(str(f), required=("a",)))


def test_load_coding_rejects_a_null_test_before_compile(tmp_path, monkeypatch):
    import magrpo_edu.tasks.coding.data as coding

    _jsonl(tmp_path, [GOOD_CODING | {"test": None}], "coding_train.jsonl")
    monkeypatch.setattr(coding, "data_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match=r"coding_train.jsonl, line 1, field 'test': must be a non-empty string, got null"):
        coding.load_coding("train")


def test_prompt_longer_than_the_context_is_refused_before_generating(small_tokenizer):
    from types import SimpleNamespace

    from magrpo_edu.agents import separate_agents, team_backend
    from magrpo_edu.backends import PromptTooLongError, check_prompt_lengths, sampling_settings
    from magrpo_edu.pretraining.pretrain import build_model

    tok = small_tokenizer
    model = build_model(len(tok), tok, hidden_size=16, layers=1, heads=2, intermediate_size=32, max_positions=32)
    agent = separate_agents(model, 1, tokenizer=tok)[0]
    cfg = SimpleNamespace(max_new_tokens=8, temperature=1.0, top_p=1.0, top_k=0)
    n_tokens = lambda p: len(tok(p)["input_ids"])  # noqa: E731
    long = "word " * 60
    near = next("word " * k for k in range(1, 60) if 26 <= n_tokens("word " * k) <= 32)  # fits, but not with 8 new tokens
    assert n_tokens(long) > 32
    with pytest.raises(PromptTooLongError, match=rf"agent 'agent_0': 1 prompt\(s\) do not fit in the model's context of 32 "
                       rf"tokens; the longest is {n_tokens(long)} tokens and is longer than the context by itself") as e:
        team_backend([agent]).sample([agent], [["short", long]], 2, sampling_settings(cfg))
    assert "Prompts are not truncated" in str(e.value) and "lower max_new_tokens" in str(e.value)
    # by how much, and never a negative budget (issue 28, item 8: it once advised max_new_tokens <= -99031)
    assert f"by {n_tokens(long) - 32} tokens: no max_new_tokens can make it fit" in str(e.value) and "<= -" not in str(e.value)
    with pytest.raises(PromptTooLongError, match=rf"leaves {32 - n_tokens(near)} positions for max_new_tokens=8 "
                       rf"\(it needs {n_tokens(near) + 8} = {n_tokens(near)} \+ max_new_tokens 8\)"):
        team_backend([agent]).sample([agent], [[near]], 2, sampling_settings(cfg))
    with pytest.raises(PromptTooLongError, match="2 prompt"):  # the whole dataset at once, before training
        check_prompt_lengths(agent, ["short", near, long], max_new_tokens=8)
    check_prompt_lengths(agent, ["short", near], max_new_tokens=32 - n_tokens(near))
    out = team_backend([agent]).sample([agent], [["short"]], 2, sampling_settings(cfg))  # what fits still samples
    assert out[0].completion_ids.shape[0] == 2


def test_json_array_files_are_checked_like_json_lines(tmp_path):
    f = tmp_path / "arr.json"
    f.write_text('[{"abstract": "fine"}, {"abstract": "half \\udc00 pair"}]')
    with pytest.raises(ValueError, match=r"arr.json, item 1, field 'abstract': lone surrogate U\+DC00 at character 5"):
        load_arxiv_hub(str(f))  # `datasets` dropped the surrogate silently
    f.write_text("[]")
    with pytest.raises(ValueError, match=r"arr.json: no rows \(the JSON array is empty\)"):
        load_arxiv_hub(str(f))


@pytest.mark.slow
def test_missing_files_and_unreachable_hub_datasets_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope.jsonl: no such file. Pass an existing JSON Lines file"):
        load_arxiv_hub(str(tmp_path / "nope.jsonl"))
    pytest.importorskip("datasets", reason="optional dependency; .ci/run installs the [data] extra so CI runs this")
    from magrpo_edu.resources import DataNotAvailableError

    with pytest.raises(DataNotAvailableError, match=r"Could not load the dataset 'made-up-org/made-up-data' \(split 'train'\)"
                       r".*pass a local JSON Lines file"):
        load_tldr_hub(path="made-up-org/made-up-data")


def test_a_first_prompt_longer_than_the_context_says_so_at_construction(small_tokenizer):
    """The trainer's check at construction uses the policy's message: the prompt alone is too long, by how much."""
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer
    from magrpo_edu.agents import separate_agents
    from magrpo_edu.backends import PromptTooLongError
    from magrpo_edu.pretraining.pretrain import build_model

    tok = small_tokenizer
    model = build_model(len(tok), tok, hidden_size=16, layers=1, heads=2, intermediate_size=32, max_positions=32)
    agents = separate_agents(model, 2, tokenizer=tok)
    rows = [{"text": "word " * 60}]
    with pytest.raises(PromptTooLongError, match=r"longer than the context by itself, by \d+ tokens") as e:
        MAGRPOTrainer(agents, lambda c, r: [0.0] * len(c[0]), [lambda r: r["text"]] * 2, rows,
                      MAGRPOConfig(max_new_tokens=4, num_generations=2, progress=False))
    assert "<= -" not in str(e.value)
