// Memory search by related words (WordNet, lib/memory/related-words.ts): a question naming a kind of thing finds the
// memory naming a member of it ("martial arts" → taekwondo), on both engines and with encryption at rest, while a
// memory naming the asked word itself still ranks first and names are never read as nouns.
import crypto from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { queryTerms, relatedMemoryIds, searchMemories } from "@/lib/memory/long-term";
import { addMemory, setPrivate } from "@/lib/memory/store";
import { recall } from "@/lib/memory/recall";
import {
  ALTERNATIVES,
  MAX_RELATED,
  MAX_RELATED_PER_QUESTION,
  relatedWords,
  withRelatedWords,
} from "@/lib/memory/related-words";
import { setEncryptionKeys } from "@/lib/crypto/content";

describe("related words", () => {
  it("lists the kinds of a noun, plural or compound, nearest first and bounded", () => {
    expect(relatedWords("martial art")).toEqual(expect.arrayContaining(["taekwondo", "karate", "judo"]));
    expect(relatedWords("desserts")).toEqual(expect.arrayContaining(["ice cream", "mousse"]));
    expect(relatedWords("kid")).toContain("child"); // the word's own synonyms come first
    expect(relatedWords("sport").length).toBeLessThanOrEqual(MAX_RELATED);
    expect(relatedWords("martial art")).not.toContain("martial art");
    expect(relatedWords("qwzxv")).toEqual([]);
  });

  it("knows plurals no suffix rule undoes: children, wives, teeth", () => {
    expect(relatedWords("children")).toContain("kid");
    expect(relatedWords("grandchildren")).toContain("grandson");
    expect(relatedWords("wives")).toContain("married woman");
    expect(relatedWords("shelves")).toContain("bookshelf");
    expect(relatedWords("teeth")).toContain("dentition");
  });

  it("adds a term of alternatives after each noun, a known compound's in place of its head's, none for names", () => {
    const q = "What martial arts has John done? Which European countries did he see?";
    const terms = withRelatedWords(queryTerms(q), q);
    const related = terms.filter((t) => t.includes(ALTERNATIVES)).map((t) => t.split(ALTERNATIVES));
    // The question's own words stay terms of their own.
    expect(terms).toEqual(expect.arrayContaining(["martial", "arts", "john", "european", "countries"]));
    expect(related.find((a) => a[0] === "arts")).toEqual(expect.arrayContaining(["taekwondo"]));
    expect(related.find((a) => a[0] === "countries")).toEqual(expect.arrayContaining(["spain", "england"]));
    // "john" is a name here, not WordNet's noun for a toilet.
    expect(related.some((a) => a[0] === "john")).toBe(false);
    expect(terms.join(" ")).not.toContain("toilet");
    // Nor are pronouns: "he" is not WordNet's helium.
    expect(related.some((a) => a[0] === "he")).toBe(false);
    // A question of many nouns gets a bounded query: the first nouns' related words, the rest none.
    const many = "animals plants foods drinks sports games books films songs cities countries tools vehicles";
    const bounded = withRelatedWords(queryTerms(many), many).filter((t) => t.includes(ALTERNATIVES));
    expect(bounded.reduce((sum, t) => sum + t.split(ALTERNATIVES).length - 1, 0)).toBe(MAX_RELATED_PER_QUESTION);
    expect(bounded[0].split(ALTERNATIVES)[0]).toBe("animals");
    // Lowercase, it is a noun like any other.
    expect(withRelatedWords(["john"], "where is the john").join(" ")).toContain("toilet");
  });
});

describe.each(engines)("memory search by related words on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  afterEach(() => setEncryptionKeys(undefined));

  async function userWith(texts: string[]) {
    const user = await t.db.user.create({ data: { email: `related-${engine}-${n++}@example.com` } });
    for (const text of texts)
      await addMemory(await userContext(t.db, user.id), { text, source: "manual" }, "user", "t");
    return userContext(t.db, user.id);
  }
  const found = async (u: Awaited<ReturnType<typeof userWith>>, q: string) =>
    (await searchMemories(u, q)).map((m) => m.text);

  it("finds a memory naming a kind of what the question names", async () => {
    const u = await userWith([
      "Practises taekwondo on Tuesday evenings",
      "Is allergic to peanuts",
      "Works as a nurse in Porto",
      "Favourite food is coconut ice cream",
    ]);
    expect(await found(u, "What martial arts do I do?")).toEqual(["Practises taekwondo on Tuesday evenings"]);
    expect((await found(u, "Which desserts do I like?"))[0]).toBe("Favourite food is coconut ice cream");
    const kids = await userWith(["Takes the kids swimming on Saturdays", "Works as a nurse in Porto"]);
    expect(await found(kids, "What do I do with my children at the weekend?")).toEqual([
      "Takes the kids swimming on Saturdays",
    ]);
    // And recall puts it in front of the model.
    const r = await recall(u, "Any martial arts class near me?", { budget: 60, passages: false });
    expect(r.memories.map((m) => m.text)).toContain("Practises taekwondo on Tuesday evenings");
  });

  it("ranks a memory naming the asked word above one naming only a related word", async () => {
    const u = await userWith(["Wants to try a martial art next year", "Practises taekwondo on Tuesday evenings"]);
    expect(await found(u, "What martial art do I do?")).toEqual([
      "Wants to try a martial art next year",
      "Practises taekwondo on Tuesday evenings",
    ]);
  });

  it("works the same with encryption at rest (alternatives searched by their tokens)", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    const u = await userWith(["Practises taekwondo on Tuesday evenings", "Is allergic to peanuts"]);
    expect(u.cipher.enabled).toBe(true);
    expect(await found(u, "What martial arts do I do?")).toEqual(["Practises taekwondo on Tuesday evenings"]);
    expect(await found(u, "Which desserts do I like?")).toEqual([]);
  });

  it("the dashboard's related memories: general, each project's and private ones, never another user's", async () => {
    const u = await userWith(["Practises taekwondo on Tuesday evenings", "Is allergic to peanuts"]);
    const project = await t.db.project.create({ data: { userId: u.userId, name: "Dojo" } });
    const judo = await t.db.memory.create({
      data: { userId: u.userId, projectId: project.id, text: "Has a black belt in judo", source: "manual" },
    });
    await setPrivate(u, judo.id, true);
    const other = await userWith(["Teaches karate to children"]);
    const ids = await relatedMemoryIds(u, "martial arts", [project.id]);
    const texts = (await t.db.memory.findMany({ where: { id: { in: ids } } })).map((m) => m.text).sort();
    expect(texts).toEqual(["Has a black belt in judo", "Practises taekwondo on Tuesday evenings"]);
    expect(await relatedMemoryIds(other, "martial arts", [project.id])).toHaveLength(1); // their own karate only
  });
});
