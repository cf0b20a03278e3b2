// A model server that is down, or cuts its stream, said at once and as what it is (lib/llm/model-failure.ts): the
// web chat names the server and why within 2 s (never "can't reach its database", never a 31 s wait for the
// sweeper), Retry answers once it is back, and the user's message is kept throughout.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { classifyModelFailure } from "@/lib/llm/model-failure";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());

/** A loopback port where nothing listens. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe("classifying a model server's failure", () => {
  it("names the server and why: refused, no such name, a cut stream, a status", async () => {
    const port = await closedPort();
    const refused = await new OpenAI({ apiKey: "k", baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).models
      .list()
      .catch((e: unknown) => e);
    expect(classifyModelFailure(refused, `http://127.0.0.1:${port}/v1`)).toMatchObject({
      kind: "refused",
      where: `127.0.0.1:${port}`,
      message: expect.stringContaining(`could not reach the model server at 127.0.0.1:${port} (connection refused)`),
    });
    const dns = await new OpenAI({ apiKey: "k", baseURL: "http://no-such-host.invalid/v1", maxRetries: 0 }).models
      .list()
      .catch((e: unknown) => e);
    expect(classifyModelFailure(dns, "http://no-such-host.invalid/v1")?.kind).toBe("dns");
    expect(classifyModelFailure(new TypeError("terminated"), "http://m:1/v1")?.kind).toBe("cut");
    expect(classifyModelFailure(new Error("Can't reach database server at 127.0.0.1:5432"))).toBeNull();
  });
});

describe.each(engines)("a model server that is down, in the web chat, on %s", (engine) => {
  let t: TestDb;
  let admin: string;
  beforeAll(async () => {
    t = await createTestDb(engine);
    admin = (await t.db.user.create({ data: { email: `mf-admin-${engine}@example.com`, role: "ADMIN" } })).id;
  });
  afterAll(async () => t?.close());

  it("says within 2 s which server could not be reached, keeps the question, and Retry works once it is back", async () => {
    const port = await closedPort();
    await saveConnection(
      t.db,
      { baseURL: `http://127.0.0.1:${port}/v1`, chatModel: "mock-chat", memoryModel: "" },
      admin,
    );
    clearConnectionCache(t.db);
    const user = (await t.db.user.create({ data: { email: `mf-${engine}@example.com` } })).id;
    const started = Date.now();
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Is the model there?" }));
    expect(Date.now() - started).toBeLessThan(2000);
    const last = events.at(-1) as Extract<TurnEvent, { type: "error" }>;
    expect(last.type).toBe("error");
    expect(last.message).toBe(
      `Mnemo could not reach the model server at 127.0.0.1:${port} (connection refused). Try again in a moment.`,
    );
    expect(last.message).not.toMatch(/database/i);
    const start = events[0] as Extract<TurnEvent, { type: "start" }>;
    expect(await t.db.item.findUniqueOrThrow({ where: { id: start.userItemId } })).toMatchObject({
      content: "Is the model there?",
    });
    expect(await t.db.item.findUniqueOrThrow({ where: { id: start.assistantItemId } })).toMatchObject({
      status: "failed",
    });
    // An administrator is told where to look as well.
    const forAdmin = await collect(runTurn(t.db, admin, { kind: "send", content: "And now?" }, { admin: true }));
    expect((forAdmin.at(-1) as { message: string }).message).toMatch(/Admin → Model settings/);

    // Back: Retry (regenerate the failed answer) answers.
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "" }, admin);
    clearConnectionCache(t.db);
    mock.script({ match: "Is the model there?", content: "Yes, here." });
    const retried = await collect(
      runTurn(t.db, user, { kind: "regenerate", threadId: start.threadId, itemId: start.assistantItemId }),
    );
    expect(retried.at(-1)).toMatchObject({ type: "done", item: { content: "Yes, here.", status: "complete" } });
  });
});
