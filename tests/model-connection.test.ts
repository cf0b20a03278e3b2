import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "@/testing/databases";
import { connectionFromForm, resolveConnection, saveConnection, savedConnectionForForm } from "@/lib/llm/connection";
import { openaiClient, testConnection } from "@/lib/llm/client";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";

let t: TestDb;
let mock: MockLlm;
beforeAll(async () => {
  t = await createTestDb("pglite");
  mock = await startMockLlm();
});
afterAll(async () => {
  await t.close();
  await mock.close();
});

describe("model connection", () => {
  it("says exactly what to set when nothing is configured", async () => {
    const s = await resolveConnection(t.db);
    expect(s.configured).toBe(false);
    if (!s.configured) expect(s.reason).toMatch(/OPENAI_API_KEY.*OPENAI_BASE_URL.*MNEMO_CHAT_MODEL/);
  });

  it("uses what an admin saved, stores the key encrypted, never returns it to the form", async () => {
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "", apiKey: "sk-very-secret-key" },
      "admin-id",
    );
    const row = await t.db.appSetting.findUniqueOrThrow({ where: { key: "model-connection" } });
    expect(JSON.stringify(row.value)).not.toContain("sk-very-secret-key");
    const form = await savedConnectionForForm(t.db);
    expect(form).toEqual({
      baseURL: mock.url,
      chatModel: "mock-chat",
      memoryModel: "",
      embeddingModel: "",
      hasApiKey: true,
    });
    const s = await resolveConnection(t.db);
    expect(s.configured && s.connection).toEqual({
      apiKey: "sk-very-secret-key",
      baseURL: mock.url,
      chatModel: "mock-chat",
      memoryModel: "mock-chat",
      embeddingModel: undefined,
    });
    const probe = s.configured ? await testConnection(s.connection) : null;
    expect(probe).toEqual({ ok: true, models: ["mock-chat", "mock-memory", "mock-embed"] });
    expect(mock.requests.at(-1)?.headers.authorization).toBe("Bearer sk-very-secret-key");
  });

  it("Test connection sends the saved key only to the saved server: another address needs the key typed again", async () => {
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "", apiKey: "sk-very-secret-key" },
      "admin-id",
    );
    // The saved server, key left empty: tested with the saved key.
    const same = await connectionFromForm(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "" });
    expect(same.configured && same.connection.apiKey).toBe("sk-very-secret-key");
    // Another address typed, key left empty: refused before anything is sent, whatever the path.
    await expect(
      connectionFromForm(t.db, { baseURL: "http://attacker.example:8080/v1", chatModel: "mock-chat", memoryModel: "" }),
    ).rejects.toThrow(/type its API key/);
    // The same address with another path is the same server; a key typed for a new one is used for it.
    const typed = await connectionFromForm(t.db, {
      baseURL: "http://attacker.example:8080/v1",
      chatModel: "mock-chat",
      memoryModel: "",
      apiKey: "sk-typed-for-this-one",
    });
    expect(typed.configured && typed.connection.apiKey).toBe("sk-typed-for-this-one");
  });

  it("keeps the stored key when the form leaves it empty, and clears it on request", async () => {
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "other", memoryModel: "" }, "admin-id");
    let s = await resolveConnection(t.db);
    expect(s.configured && s.connection.apiKey).toBe("sk-very-secret-key");
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "other", memoryModel: "", clearApiKey: true },
      "admin-id",
    );
    s = await resolveConnection(t.db);
    expect(s.configured && s.connection.apiKey).toBeUndefined();
  });

  it("a key changed by an admin is the one the next request sends, though clients are reused", async () => {
    const ask = async (apiKey: string) => {
      await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "", apiKey }, "admin-id");
      const s = await resolveConnection(t.db);
      if (!s.configured) throw new Error("not configured");
      await openaiClient(s.connection).chat.completions.create({
        model: "mock-chat",
        messages: [{ role: "user", content: "hi" }],
      });
      return [openaiClient(s.connection), mock.requests.at(-1)?.headers.authorization];
    };
    const [first, sent] = await ask("sk-first-key");
    expect(sent).toBe("Bearer sk-first-key");
    const [second, sentNext] = await ask("sk-rotated-key");
    expect(sentNext).toBe("Bearer sk-rotated-key");
    expect(second).not.toBe(first);
    // The same server and key again: the same client.
    expect((await ask("sk-rotated-key"))[0]).toBe(second);
  });

  it("reports a server that is down as one readable line", async () => {
    const r = await testConnection({ baseURL: "http://127.0.0.1:9/v1", chatModel: "x", memoryModel: "x" });
    expect(r).toEqual({
      ok: false,
      error:
        "Mnemo could not reach the model server at 127.0.0.1:9 (Node.js refuses to connect to that port; choose " +
        "another). Try again in a moment. " +
        "Check that it is running, and its address on Admin → Model settings.",
    });
  });
});
