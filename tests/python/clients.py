"""Mnemo driven by Python clients nobody here wrote: the `openai` package (chat completions with None parameters and
response_format, the Responses API streamed and not, embeddings) and the `mcp` package (tools over Streamable HTTP,
a bad key, GET /mcp). Run by e2e/python-clients.spec.ts against the production build: MNEMO_URL, MNEMO_KEY."""
import asyncio
import os
import sys

import httpx2 as httpx
from openai import OpenAI, NotFoundError, AuthenticationError
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

URL = os.environ["MNEMO_URL"].rstrip("/")
KEY = os.environ["MNEMO_KEY"]
failures: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


client = OpenAI(base_url=f"{URL}/v1", api_key=KEY, max_retries=0)

# Chat completions: None for what is not set (the SDK sends null when a variable is None), JSON mode.
r = client.chat.completions.create(
    model="mnemo",
    messages=[{"role": "user", "content": "hello from python", "name": None}],
    temperature=None,
    top_p=None,
    max_tokens=None,
    stop=None,
    user=None,
    response_format={"type": "json_object"},
)
check(bool(r.choices[0].message.content), "chat.completions with None parameters and response_format")

# The Responses API, then streamed.
resp = client.responses.create(model="mnemo", instructions="Be brief.", input="hello responses from python")
check(resp.status == "completed" and bool(resp.output_text), "responses.create")
again = client.responses.retrieve(resp.id)
check(again.output_text == resp.output_text, "responses.retrieve")
follow = client.responses.create(model="mnemo", previous_response_id=resp.id, input="and again")
check(bool(follow.output_text), "responses.create with previous_response_id")
text = ""
kinds: list[str] = []
for event in client.responses.create(model="mnemo", input="stream from python", stream=True):
    kinds.append(event.type)
    if event.type == "response.output_text.delta":
        text += event.delta
check(kinds[0] == "response.created" and kinds[-1] == "response.completed" and bool(text), "responses streamed")

# Conversations.
conv = client.conversations.create(items=[{"type": "message", "role": "user", "content": "I live in Porto"}])
listed = client.conversations.items.list(conv.id, order="asc")
check(len(listed.data) == 1, "conversations.create and items.list")
client.conversations.delete(conv.id)

# Embeddings (the SDK asks for base64 and decodes it).
emb = client.embeddings.create(model="anything", input=["a dog", "a puppy"])
check(len(emb.data) == 2 and len(emb.data[0].embedding) > 0, "embeddings")

# A path Mnemo does not serve: OpenAI's error shape, so the SDK raises its own NotFoundError.
try:
    client.completions.create(model="x", prompt="hi")
    check(False, "legacy completions answer 404")
except NotFoundError as e:
    check("does not serve" in str(e), "legacy completions answer 404 in OpenAI's shape")

try:
    OpenAI(base_url=f"{URL}/v1", api_key="mnemo_not-a-key", max_retries=0).models.list()
    check(False, "a bad key is refused")
except AuthenticationError as e:
    check("not valid" in str(e), "a bad key is refused with Mnemo's sentence")


async def mcp_checks() -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(f"{URL}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                check("search_memory" in tools and "remember" in tools, f"mcp tools/list ({', '.join(tools)})")
                saved = await session.call_tool("remember", {"text": "Prefers green tea (from python)"})
                check(not saved.is_error, "mcp remember")
                found = await session.call_tool("search_memory", {"query": "green tea"})
                check("green tea" in str(found.content), "mcp search_memory")
    async with httpx.AsyncClient() as h:
        bad = await h.post(
            f"{URL}/mcp",
            headers={"Authorization": "Bearer mnemo_not-a-key", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        )
        check(
            bad.status_code == 401
            and bad.headers.get("www-authenticate", "").startswith("Bearer")
            and "not valid" in bad.json().get("error_description", ""),
            "mcp bad key: 401, WWW-Authenticate, the reason in JSON",
        )
        get = await h.get(f"{URL}/mcp", headers={"Authorization": f"Bearer {KEY}"})
        check(get.status_code == 405, "GET /mcp is 405")
        meta = await h.get(f"{URL}/.well-known/oauth-protected-resource/mcp")
        check(meta.status_code == 404 and "json" in meta.headers.get("content-type", ""), "OAuth metadata: JSON 404")


asyncio.run(mcp_checks())
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
