"""The writing datasets: reproducible generator, hand-written eval split, loaders, bad rows."""
import json
import random

import pytest

from magrpo_edu.resources import read_jsonl
from magrpo_edu.tasks.writing import world
from magrpo_edu.tasks.writing import arxiv_formatters, load_writing, make_writing_data, tldr_formatters


def test_generator_is_seeded_and_reproducible(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    make_writing_data(a, n_train=20, seed=3)
    make_writing_data(b, n_train=20, seed=3)
    assert (a / "tldr_train.jsonl").read_text() == (b / "tldr_train.jsonl").read_text()
    make_writing_data(b, n_train=20, seed=4)
    assert (a / "tldr_train.jsonl").read_text() != (b / "tldr_train.jsonl").read_text()


def test_shipped_train_split_is_the_generator_output(tmp_path):
    make_writing_data(tmp_path, n_train=500, seed=0)
    assert read_jsonl(tmp_path / "tldr_train.jsonl") == load_writing("tldr", "train")
    assert read_jsonl(tmp_path / "arxiv_train.jsonl") == load_writing("arxiv", "train")


def test_generated_posts_are_varied():
    rng = random.Random(0)
    posts = [world.make_post(rng) for _ in range(300)]
    words = [len(p["text"].split()) for p in posts]
    assert 45 <= min(words) and max(words) <= 250
    assert len({p["topic"] for p in posts}) >= 8 and len({p["name"] for p in posts}) >= 10
    assert len({p["text"] for p in posts}) == 300
    words = [len(r["abstract"].split()) for r in load_writing("arxiv", "train")]
    assert 60 <= min(words) and max(words) <= 120  # about 70-100 words, like the hand-written eval abstracts


def test_eval_split_is_hand_written_and_disjoint_from_train():
    for task, field, n in (("tldr", "post", 30), ("arxiv", "abstract", 20)):
        ev = load_writing(task, "eval")
        assert len(ev) >= n and all(r["source"] == "handwritten" for r in ev)
        train = {r[field] for r in load_writing(task, "train")}
        assert not any(r[field] in train for r in ev)
        assert len({r["id"] for r in ev}) == len(ev)


def test_formatters_give_each_agent_its_role():
    row = load_writing("tldr", "eval")[0]
    concise, detailed = (f(row) for f in tldr_formatters())
    assert "concise" in concise and "detailed" in detailed and "transition" in detailed and row["post"] in concise
    bg, method = (f(load_writing("arxiv", "eval")[0]) for f in arxiv_formatters())
    assert "background" in bg and "methodology" in method


def test_chat_template_variant_is_used_when_the_tokenizer_has_one():
    class Tok:
        chat_template = "x"

        def apply_chat_template(self, msgs, tokenize, add_generation_prompt):
            return "<user>" + msgs[0]["content"] + "<assistant>"
    out = tldr_formatters(Tok())[0]({"post": "hello there"})
    assert out.startswith("<user>Write a concise summary") and out.endswith("<assistant>") and "hello there" in out


def test_malformed_rows_are_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "post": "ok"}\n{"id": "2", "post": \n')
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2: not valid JSON"):
        read_jsonl(bad, required=("id", "post"))
    bad.write_text('{"id": "1", "text": "no post field"}\n')
    with pytest.raises(ValueError, match=r"line 1: row lacks field\(s\) \['post'\]"):
        read_jsonl(bad, required=("id", "post"))
    with pytest.raises(ValueError, match="unknown writing task"):
        load_writing("poetry")


def test_hub_format_loaders_offline_on_local_files(tmp_path):
    pytest.importorskip("datasets", reason="optional dependency; .ci/run installs the [data] extra so CI runs this")
    from magrpo_edu.tasks.writing import load_arxiv_hub, load_tldr_hub

    f = tmp_path / "tldr.jsonl"  # trl-lib/tldr rows: {"prompt": <post ... TL;DR:>, "completion": <summary>}
    f.write_text("\n".join(json.dumps({"prompt": f"SUBREDDIT: r/x\nPOST: post {i}\nTL;DR:", "completion": "s"}) for i in range(5)))
    rows = load_tldr_hub(path=str(f), limit=3)
    assert [r["id"] for r in rows] == ["tldr-hub-0", "tldr-hub-1", "tldr-hub-2"] and "post 1" in rows[1]["post"]
    g = tmp_path / "arxiv.jsonl"
    g.write_text("\n".join(json.dumps({"title": "t", "abstract": f"abstract {i}"}) for i in range(4)))
    assert [r["abstract"] for r in load_arxiv_hub(str(g))] == [f"abstract {i}" for i in range(4)]
    g.write_text(json.dumps({"title": "t", "summary": "x"}))
    with pytest.raises(ValueError, match=r"arxiv.jsonl, line 1: row lacks field\(s\) \['abstract'\]"):
        load_arxiv_hub(str(g))
