// A misspelled word in a question or a search (lib/memory/spelling.ts): "funraiser" finds "fundraiser" in memories,
// in earlier chats and in the search of past chats, on both engines and with encryption at rest; a name, a guess among
// many words and a text in another language are left as written.
import crypto from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userWithHistory } from "@/testing/chat-history";
import { queryTerms, searchMemories } from "@/lib/memory/long-term";
import { recall } from "@/lib/memory/recall";
import { searchMessages } from "@/lib/chat/search";
import { respellings } from "@/lib/memory/spelling";
import { setEncryptionKeys } from "@/lib/crypto/content";

describe("respellings", () => {
  it("correct a word the dictionary does not know to the one or two words one edit away", async () => {
    const fix = async (text: string) => Object.fromEntries(await respellings(text, queryTerms(text)));
    // A letter left out, swapped, added or changed.
    expect(await fix("What is planned for the funraiser?")).toEqual({ funraiser: ["fundraiser"] });
    expect(await fix("Which torunament did he win?")).toEqual({ torunament: ["tournament"] });
    expect(await fix("the fesetival in june")).toEqual({ fesetival: ["festival"] });
    expect(await fix("recieved")).toEqual({ recieved: expect.arrayContaining(["received"]) });
    // Two words run together, when no single word is one edit away.
    expect(await fix("When did we go on the roadtrip?")).toEqual({ roadtrip: ["road trip"] });
    // Names do not count as words of another language.
    expect(await fix("Did Quintaz and Vasquez send the recieved parcel?")).toEqual({
      recieved: expect.arrayContaining(["received"]),
    });
    // Spelled right: nothing to do.
    expect(await fix("When did Caroline go to the support group?")).toEqual({});
  });

  it("leave names, guesses among many words and other languages as written", async () => {
    const fix = async (text: string) => Object.fromEntries(await respellings(text, queryTerms(text)));
    // Written with a capital: a name, whatever the dictionary says.
    expect(await fix("Did Tilly like the Skellig trip?")).toEqual({});
    // A piece of a word with an apostrophe, as search splits it ("wouldn"), is no typo.
    expect(await fix("What pets wouldn't cause any discomfort?")).toEqual({});
    // Lower case, but ten words are one letter away from it: no guess.
    expect(await fix("what did tilly say")).toEqual({});
    // Most words unknown: another language, not a string of typos.
    expect(await fix("quand est-ce que nous allons manger ensemble demain soir")).toEqual({});
  });
});

describe.each(engines)("misspelled questions on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  afterEach(() => setEncryptionKeys(undefined));

  async function check() {
    const u = await userWithHistory(
      t.db,
      `spelling-${engine}-${n++}@example.com`,
      ["Runs the chili cook-off at the shelter's fundraiser", "Planning a trip to Lisbon in May"],
      ["The tournament in Denver went to extra time", "And you won it?", "I received the trophy today"],
    );

    // The only word each question shares with what answers it is misspelled.
    expect((await searchMemories(u, "how is the funraiser going")).map((m) => m.text)).toEqual([
      "Runs the chili cook-off at the shelter's fundraiser",
    ]);
    const found = async (q: string) =>
      JSON.stringify((await recall(u, q, { budget: 300 })).passages.filter((p) => !p.recent));
    expect(await found("Which torunament was that?")).toContain("The tournament in Denver");
    // The search of past chats: found, with the word as written in the message marked.
    const r = await searchMessages(u, { q: "recieved trophy" });
    expect(r.hits.map((h) => h.snippet.filter((p) => p.hit).map((p) => p.text))).toEqual([["received", "trophy"]]);
    // And says what else it searched for.
    expect(r.respelled).toEqual([{ word: "recieved", also: expect.arrayContaining(["received"]) }]);
  }

  it("a misspelled word finds what it was meant to say in memories, earlier chats and the search", check);

  async function modelsWords() {
    const u = await userWithHistory(
      t.db,
      `spelling-words-${engine}-${n++}@example.com`,
      ["Pays the rent through venmo", "Saw Venom at the cinema"],
      [
        "Paid the rent on venmo",
        "Venmo sends it the same day, even from a roadtrip",
        "We planned the road trip for June",
        ...Array.from({ length: 5 }, (_, i) => `Some small talk, part ${i}`),
        "I watched Venom last night",
        "Was it good?",
      ],
    );
    // Recall too: the memories and the earlier chat are searched for "venmo" alone.
    expect((await searchMemories(u, "how does venmo work")).map((m) => m.text)).toEqual([
      "Pays the rent through venmo",
    ]);
    const passages = JSON.stringify((await recall(u, "how does venmo work", { budget: 300 })).passages);
    expect(passages).toContain("Venmo sends it");
    expect(passages).not.toContain("watched Venom");
    // A word an answer holds is a word, whatever the dictionary says: "venmo" is not also searched as "venom".
    const r = await searchMessages(u, { q: "venmo" });
    expect(r.respelled).toEqual([]);
    expect(r.hits.map((h) => h.snippet.map((p) => p.text).join("")).sort()).toEqual([
      "Paid the rent on venmo",
      "Venmo sends it the same day, even from a roadtrip",
    ]);
    // A word split in two is searched as two words whoever wrote it: it means the same.
    const split = await searchMessages(u, { q: "roadtrip" });
    expect(split.respelled).toEqual([{ word: "roadtrip", also: ["road trip"] }]);
    expect(split.hits).toHaveLength(2);
    // A word only the person typed is still taken for a typo (their habit, not a word).
    const typo = await searchMessages(u, { q: "recieved" });
    expect(typo.respelled).toEqual([{ word: "recieved", also: expect.arrayContaining(["received"]) }]);
  }

  it("a word a model wrote in an answer is not corrected in recall or in the search of past chats", modelsWords);

  it("the same with encryption at rest", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    await modelsWords();
  });

  it("the same with encryption at rest (each correction searched by its keyed token)", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    await check();
  });
});
