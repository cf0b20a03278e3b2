// One Agents SDK run in a process of its own (for the cross-process session
// test): opens the Mnemo thread given by MNEMO_THREAD_ID for MNEMO_USER_ID on
// DATABASE_URL, runs an agent on argv[2] against the model server at
// MOCK_LLM_URL, and prints the thread's items as one JSON line.
import OpenAI from "openai";
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import { closeDb, getDb } from "@/lib/db/client";
import { MnemoSession } from "@/lib/agents/mnemo-session";

setDefaultOpenAIClient(new OpenAI({ baseURL: process.env.MOCK_LLM_URL, apiKey: "test-key" }));
setOpenAIAPI("chat_completions");
setTracingDisabled(true);

const db = await getDb();
const session = await MnemoSession.open(db, process.env.MNEMO_USER_ID!, process.env.MNEMO_THREAD_ID);
await run(new Agent({ name: "Helper", instructions: "Be brief.", model: "mock-chat" }), process.argv[2], { session });
console.log(JSON.stringify(await session.getItems()));
await closeDb();
process.exit(0);
