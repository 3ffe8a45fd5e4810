"""The client against the shipped demo server over real HTTP (docs/design/transcripts.md §10.5)."""

from llm.client import Endpoint, Reply, complete_reply, stream_reply
from llm.demo_server import answer_words
from surveys.llm_policy import call_policy
from tests.llm_server import run_closing


def collect(endpoint: Endpoint, messages: list[dict]) -> tuple[list[str], Reply]:
    async def run():
        deltas, replies = [], []
        async for item in stream_reply(endpoint, messages, policy=call_policy()):
            (replies if isinstance(item, Reply) else deltas).append(item)
        assert len(replies) == 1, "exactly one final Reply"
        return deltas, replies[0]

    return run_closing(run())


def test_a_streamed_answer_arrives_in_pieces_then_one_reply(llm_server):
    # Given a connected system on the demo server
    endpoint = Endpoint(base_url=llm_server, model="demo-model-7")
    messages = [{"role": "user", "content": "What does the SHS measure?"}]

    # When the participant asks
    deltas, reply = collect(endpoint, messages)

    # Then the answer streamed in several pieces that make up the reply
    assert len(deltas) > 5
    assert "".join(deltas) == reply.text == "".join(answer_words(messages))
    assert reply.text.startswith('You wrote: "What does the SHS measure?".')
    assert reply.model == "demo-model-7"
    assert reply.finish_reason == "stop"
    assert reply.prompt_tokens == 5
    assert reply.completion_tokens == len(answer_words(messages))
    assert 0 <= reply.first_token_ms <= reply.latency_ms


def test_a_non_streamed_answer_is_the_same_text(llm_server):
    endpoint = Endpoint(base_url=llm_server, model="demo-model-7")
    messages = [{"role": "user", "content": "What does the SHS measure?"}]

    reply = run_closing(complete_reply(endpoint, messages, policy=call_policy()))

    assert reply.text == "".join(answer_words(messages))
    assert reply.model == "demo-model-7"
    assert reply.finish_reason == "stop"
    assert reply.first_token_ms is None


def test_an_endpoint_is_made_from_a_connected_system(llm_server):
    from surveys.models import LLMSystem

    system = LLMSystem(
        name="Demo", kind="connected", base_url=llm_server, model_name="shs-demo",
        api_key_env="", system_prompt="Be brief.", temperature=0.3, max_tokens=9,
    )  # fmt: skip

    endpoint = Endpoint.of(system)

    assert endpoint == Endpoint(llm_server, "shs-demo", "", "Be brief.", 0.3, 9)
    reply = run_closing(
        complete_reply(endpoint, [{"role": "user", "content": "Hi"}], policy=call_policy())
    )
    assert reply.model == "shs-demo"
    assert reply.completion_tokens == 9 and reply.finish_reason == "length"
    assert "A system prompt is in effect." in reply.text
