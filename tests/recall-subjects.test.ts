// Whom a memory is about (lib/memory/subjects.ts), in recall: a question that names someone is about them, and the
// memories about someone else that share its words ("Tim reads books…" for "What books has John read?") rank below
// one about the person asked about, so a small budget holds the memory the question needs. A name is a word some
// memory writes with a capital inside it ("met Tim"), and someone several memories open with.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { recall } from "@/lib/memory/recall";
import { countTokens } from "@/lib/memory/tokens";
import { aboutOthers } from "@/lib/memory/subjects";

describe("aboutOthers", () => {
  const texts = [
    "Tim is reading a fantasy book by Patrick Rothfuss.",
    "Tim lent John a book about dragons.",
    "John is reading Dune by Frank Herbert.",
    "Tim reads books at the library.",
    "Has a dog named Rex.",
    "Porto is where the user lives.",
    "The user met Tim at a book fair.",
  ];
  it("finds the memories opening with another person's name that do not name the one asked about", () => {
    expect([...aboutOthers("What books has John read?", texts)].sort()).toEqual([0, 3]);
  });
  it("keeps a memory that names the one asked about, whose name the index stems to other letters", () => {
    const about = ["Tim went hiking with Emily.", "Tim is reading Dune.", "Emily met Tim at a fair."];
    expect([...aboutOthers("What does Emily like?", about)]).toEqual([1]);
  });
  it("finds none when the text names more people than a question asks about (a pasted list)", () => {
    const roster = "Ann Bob Cid Dan Eve Fay Gus Hal Ida Jim Kay Lee Max Ned".split(" ").map((n) => `met ${n}`);
    expect(aboutOthers(`Who of these did John see? ${roster.join(", ")}`, texts).size).toBe(0);
    expect(aboutOthers(`Who of these did John see? ${roster.slice(0, 5).join(", ")}`, texts).size).toBe(2);
  });
  it("finds none when the question names nobody, or names the person they are about", () => {
    expect(aboutOthers("What books have I read?", texts).size).toBe(0);
    expect(aboutOthers("What has Tim read?", texts).size).toBe(0);
  });
});

describe.each(engines)("recall of a question about someone, on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("ranks a memory about the person asked about above those about someone else that share more words", async () => {
    const user = (await t.db.user.create({ data: { email: `subjects-${engine}@example.com` } })).id;
    const texts = [
      "Tim is reading a book about dragons and loves fantasy books.",
      "Tim has read every book in the Harry Potter series, and rereads the books each year.",
      "Tim reads books at the library every weekend and has read hundreds of them.",
      "John is reading Dune by Frank Herbert.",
      "John plays basketball for the Minnesota Wolves.",
      "John visited Chicago with his family last summer.",
      "Tim is studying literature at university.",
      "John met Tim at university.",
    ];
    await t.db.memory.createMany({
      data: texts.map((text) => ({ userId: user, text, source: "inferred" as const, tokens: countTokens(text) })),
    });
    const u = await userContext(t.db, user);
    const got = await recall(u, "What books has John read?", { budget: 40, passages: false });
    expect(got.memories.map((m) => m.text)).toContain("John is reading Dune by Frank Herbert.");
  });
});
