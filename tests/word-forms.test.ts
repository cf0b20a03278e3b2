// A question's irregular word forms (lib/memory/word-forms.ts): "Where did I go?" finds "we went", "meet" finds
// "met", in memories and in earlier chats, on both engines and with encryption at rest. Stemming alone joins only
// regular endings ("visits", "visited").
import crypto from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userWithHistory } from "@/testing/chat-history";
import { searchMemories } from "@/lib/memory/long-term";
import { recall } from "@/lib/memory/recall";
import { FORMS, wordForms, withWordForms } from "@/lib/memory/word-forms";
import { ALTERNATIVES } from "@/lib/memory/related-words";
import { setEncryptionKeys } from "@/lib/crypto/content";

describe("word forms", () => {
  it("joins a verb or noun to its irregular forms, in either direction, and only where stemming cannot", () => {
    expect(wordForms("go")).toEqual(expect.arrayContaining(["went", "gone"]));
    expect(wordForms("went")).toEqual(expect.arrayContaining(["go", "gone"]));
    expect(wordForms("buy")).toEqual(["bought"]);
    expect(wordForms("met")).toEqual(["meet"]);
    expect(wordForms("children")).toEqual(["child"]);
    // Regular words have none ("visited" already stems as "visit"); a name or an unknown word neither.
    expect(wordForms("visit")).toEqual([]);
    expect(wordForms("lighthouse")).toEqual([]);
    // An object's own keys are not words ("constructor" is no exception list's entry).
    expect(wordForms("constructor")).toEqual([]);
  });

  it("puts a word's forms in its own term and leaves a term of related words as it is", () => {
    const related = ["art", ["art", "taekwondo"].join(ALTERNATIVES)];
    expect(withWordForms(["bought", ...related])).toEqual([["bought", "buy"].join(FORMS), ...related]);
  });
});

describe.each(engines)("irregular forms in recall on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  afterEach(() => setEncryptionKeys(undefined));

  const userWith = (memories: string[], messages: string[]) =>
    userWithHistory(t.db, `forms-${engine}-${n++}@example.com`, memories, messages);

  async function check() {
    // The only word each question shares with what answers it is an irregular form of its own.
    const u = await userWith(
      ["Met Joana at the Lisbon book fair", "Joana lives in Braga", "Works as a nurse in Porto"],
      [
        "In March we went to Crete, the beaches were quiet",
        "That sounds lovely.",
        "I finally bought the blue Fiat",
        "Nice!",
      ],
    );
    // Without the forms both Joana memories match only her name, and the newer goes first.
    const memories = (await searchMemories(u, "Where did I meet Joana?")).map((m) => m.text);
    expect(memories[0]).toBe("Met Joana at the Lisbon book fair");
    const found = async (q: string) =>
      JSON.stringify((await recall(u, q, { budget: 400 })).passages.filter((p) => !p.recent));
    expect(await found("Where did we go in spring?")).toContain("we went to Crete");
    expect(await found("Which one did I buy in the end?")).toContain("bought the blue Fiat");
  }

  it("a question's words find their irregular forms in memories and earlier chats", check);

  it("the same with encryption at rest (each form searched by its keyed token)", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    await check();
  });
});
