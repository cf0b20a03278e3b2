// Choosing the model: the admin's list, a thread's and a project's pick, regenerate with another model, and a model
// taken off the list falling back to the default with a note. Whole turns against the test model server.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { clearConnectionCache, resolveConnection, saveConnection, saveModelList } from "@/lib/llm/connection";
import { chooseModel, modelListSchema } from "@/lib/llm/models";
import { knownPromptLimit } from "@/lib/llm/prompt-limits";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { setThreadModel, threadView } from "@/lib/chat/threads";
import { createProject } from "@/lib/projects/projects";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

/** The model the newest answer was asked of (titles and learning go to the memory model meanwhile). */
const answered = () =>
  mock
    .chatRequests()
    .filter((r) => r.body.model !== "mock-memory")
    .at(-1)?.body.model;

type Start = Extract<TurnEvent, { type: "start" }>;
type Done = Extract<TurnEvent, { type: "done" }>;

describe("the model list", () => {
  it("refuses a default that is not listed, a model listed twice, and an empty list", () => {
    const bad = (v: unknown) => modelListSchema.safeParse(v).error?.issues[0].message;
    expect(bad({ models: [{ id: "a" }], defaultId: "b" })).toMatch(/default model must be on the list/);
    expect(bad({ models: [{ id: "a" }, { id: "a" }], defaultId: "a" })).toMatch(/"a" is listed twice/);
    expect(bad({ models: [], defaultId: "a" })).toMatch(/at least one model/);
    expect(bad({ models: [{ id: "a", contextTokens: 10 }], defaultId: "a" })).toMatch(/too small/);
  });

  it("a pick no longer listed falls back to the default, saying so", () => {
    const models = [
      { id: "d", label: "Default one", vision: false, contextTokens: null },
      { id: "x", label: "X", vision: true, contextTokens: null },
    ];
    expect(chooseModel(models, undefined, "x", "d")).toEqual({ model: models[1], note: null });
    expect(chooseModel(models, null, null, null).model.id).toBe("d");
    expect(chooseModel(models, "gone").note).toMatch(/gone is no longer offered here, so Default one answered/);
  });

  it("the context size the admin gives a model bounds its prompts", () => {
    const conn = { baseURL: "http://127.0.0.1:1/v1", chatModel: "small", chatContextTokens: 8_000 };
    expect(knownPromptLimit(conn, "small")).toBe(6_000);
    expect(knownPromptLimit(conn, "other")).toBeNull();
  });
});

describe.each(engines)("choosing the model on %s", (engine) => {
  let t: TestDb;
  let userId: string;
  const { defer, flush } = deferred(() => t.db);
  const send = async (req: Record<string, unknown>) => collect(runTurn(t.db, userId, req, { defer }));

  beforeAll(async () => {
    t = await createTestDb(engine);
    userId = (await t.db.user.create({ data: { email: `models-${engine}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, userId);
    await saveModelList(
      t.db,
      {
        models: [
          { id: "mock-chat", label: "Everyday" },
          { id: "mock-alt", label: "Careful", vision: true, contextTokens: 32_000 },
        ],
        defaultId: "mock-chat",
      },
      userId,
    );
    clearConnectionCache(t.db);
  });
  afterAll(async () => {
    await flush();
    await t?.close();
  });

  it("the saved list: the default first, with what the admin said of each", async () => {
    const s = await resolveConnection(t.db);
    expect(s.configured && s.models).toEqual([
      { id: "mock-chat", label: "Everyday", vision: false, contextTokens: null },
      { id: "mock-alt", label: "Careful", vision: true, contextTokens: 32_000 },
    ]);
    expect(s.configured && s.connection.chatModel).toBe("mock-chat");
  });

  it("a thread answered by two models shows each under its answer; regenerate picks another once", async () => {
    const first = await send({ kind: "send", content: "hello there" });
    const threadId = (first[0] as Start).threadId;
    expect((first.at(-1) as Done).item.model).toBe("mock-chat");
    expect(answered()).toBe("mock-chat");

    await setThreadModel(t.db, userId, threadId, "mock-alt");
    const second = await send({ kind: "send", threadId, content: "and now?" });
    expect((second[0] as Start).model).toBe("mock-alt");
    expect(answered()).toBe("mock-alt");

    const answer = (second.at(-1) as Done).item;
    await send({ kind: "regenerate", threadId, itemId: answer.id, model: "mock-chat" });
    expect(answered()).toBe("mock-chat");

    const u = await userContext(t.db, userId);
    const view = await threadView(u, threadId);
    expect(view.thread.model).toBe("mock-alt"); // regenerate's pick was for that answer only
    const answers = view.items.filter((i) => i.role === "assistant");
    expect(answers.map((i) => i.model)).toEqual(["mock-chat", "mock-chat"]);
    const branches = await t.db.item.findMany({ where: { threadId, role: "assistant" }, orderBy: { position: "asc" } });
    expect(branches.map((i) => i.model)).toEqual(["mock-chat", "mock-alt", "mock-chat"]);
  });

  it("a new chat's pick is kept; a project's model answers its new chats", async () => {
    const picked = await send({ kind: "send", content: "pick me", model: "mock-alt" });
    const threadId = (picked[0] as Start).threadId;
    expect((await t.db.thread.findUniqueOrThrow({ where: { id: threadId } })).model).toBe("mock-alt");

    const u = await userContext(t.db, userId);
    const project = await createProject(u, { name: "Careful work", model: "mock-alt" });
    const inProject = await send({ kind: "send", content: "in the project", projectId: project.id });
    expect((inProject[0] as Start).model).toBe("mock-alt");
    expect(answered()).toBe("mock-alt");
  });

  it("a model that is not offered cannot be picked; one taken off the list falls back with a note", async () => {
    const first = await send({ kind: "send", content: "before the change" });
    const threadId = (first[0] as Start).threadId;
    await expect(setThreadModel(t.db, userId, threadId, "gpt-9")).rejects.toThrow(/gpt-9 is not one of the models/);
    const u = await userContext(t.db, userId);
    await expect(createProject(u, { name: "Bad", model: "gpt-9" })).rejects.toThrow(/not one of the models/);

    await setThreadModel(t.db, userId, threadId, "mock-alt");
    await saveModelList(t.db, { models: [{ id: "mock-chat", label: "Everyday" }], defaultId: "mock-chat" }, userId);
    clearConnectionCache(t.db);
    try {
      const after = await send({ kind: "send", threadId, content: "after the change" });
      const start = after[0] as Start;
      expect(start.model).toBe("mock-chat");
      expect(start.modelNote).toMatch(/mock-alt is no longer offered here, so Everyday answered instead/);
      expect(answered()).toBe("mock-chat");
      // A request naming an unlisted model for a turn is answered by the default too (never sent to the server).
      await send({ kind: "send", threadId, content: "sneaky", model: "gpt-9" });
      expect(mock.chatRequests().map((r) => r.body.model)).not.toContain("gpt-9");
    } finally {
      await saveModelList(
        t.db,
        {
          models: [
            { id: "mock-chat", label: "Everyday" },
            { id: "mock-alt", label: "Careful", vision: true, contextTokens: 32_000 },
          ],
          defaultId: "mock-chat",
        },
        userId,
      );
      clearConnectionCache(t.db);
    }
  });
});
