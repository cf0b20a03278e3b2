// An OpenAI Agents SDK agent whose history lives in a Mnemo thread and which
// uses Mnemo's long-term memory as tools. Runs offline against the project's
// test server: `npx tsx examples/agent-with-mnemo.ts`. Against a real model,
// drop the mock and set OPENAI_API_KEY (or setDefaultOpenAIClient with your
// endpoint), and open the session for a real user id and thread id.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";

process.env.MNEMO_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-agent-"));
process.env.AUTH_SECRET ??= "example-secret-example-secret-example-00";

const { getDb, closeDb } = await import("../lib/db/client");
const { startMockLlm } = await import("../testing/mock-llm");
const { MnemoSession } = await import("../lib/agents/mnemo-session");
const { mnemoMemoryTools } = await import("../lib/agents/memory-tools");
const { userContext } = await import("../lib/user-context");

const mock = await startMockLlm();
mock.script(
  {
    match: "remember",
    toolCalls: [{ name: "remember", arguments: { text: "Prefers window seats", kind: "preference" } }],
  },
  { match: "remember", content: "Noted: you prefer window seats." },
);
setDefaultOpenAIClient(new OpenAI({ baseURL: mock.url, apiKey: "not-needed" }));
setOpenAIAPI("chat_completions");
setTracingDisabled(true);

const db = await getDb();
const user = await db.user.upsert({
  where: { email: "agent-example@example.com" },
  create: { email: "agent-example@example.com" },
  update: {},
});
const agent = new Agent({
  name: "Travel helper",
  instructions: "Help plan trips. Use memory.",
  model: "mock-chat",
  tools: mnemoMemoryTools(await userContext(db, user.id)),
});

const session = await MnemoSession.open(db, user.id);
console.log((await run(agent, "Please remember I like window seats", { session })).finalOutput);
console.log((await run(agent, "Book me a flight to Oslo", { session })).finalOutput);
console.log(
  `thread ${await session.getSessionId()} now holds ${(await session.getItems()).length} items; memories:`,
  (await db.memory.findMany({ where: { userId: user.id } })).map((m) => m.text),
);
await mock.close();
await closeDb();
