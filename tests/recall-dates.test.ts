// Dates named in a question, and recall favouring what was said on them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { asksAboutTime, asksOnlyWhen, questionDates } from "@/lib/memory/dates";
import { memoryBlock } from "@/lib/memory/recall-block";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { appendItems } from "@/lib/memory/session";
import { createThread } from "@/lib/chat/threads";
import { recall } from "@/lib/memory/recall";

const iso = (d: Date) => d.toISOString().slice(0, 10);

describe("asksAboutTime (memories go in dated)", () => {
  it.each([
    ["When did I start at Acme?", true],
    ["How long have I had Rex?", true],
    ["What did I do last weekend?", true],
    ["Where was I in March?", true],
    ["Is she still in Porto?", true],
    ["What happened on 8 May 2023?", true],
    ["How many times have I been to Lisbon?", true],
    ["What are my hobbies?", false],
    ["Any tips to sleep better tomorrow?", false],
    ["What should I cook for my sister?", false],
    ["Which books does Melanie like?", false],
  ])("%s → %s", (q, dated) => {
    expect(asksAboutTime(q)).toBe(dated);
  });
});

describe("questionDates", () => {
  const now = new Date("2026-11-21T12:00:00Z");
  it("reads days, months and a few relative dates", () => {
    expect(questionDates("What movie did Joanna watch on 1 May, 2022?").map((r) => [iso(r.start), iso(r.end)])).toEqual(
      [["2022-04-30", "2022-05-03"]],
    );
    expect(
      questionDates("What painting was shared on October 13, 2023?").map((r) => [iso(r.start), iso(r.end)]),
    ).toEqual([["2023-10-12", "2023-10-15"]]);
    expect(questionDates("Where did she travel in July 2022?").map((r) => [iso(r.start), iso(r.end)])).toEqual([
      ["2022-07-01", "2022-08-01"],
    ]);
    expect(questionDates("what did we talk about yesterday", now).map((r) => iso(r.start))).toEqual(["2026-11-19"]);
    expect(questionDates("What did I say last month?", now).map((r) => [iso(r.start), iso(r.end)])).toEqual([
      ["2026-10-01", "2026-11-01"],
    ]);
  });
  it("reads a stretch of days whose year is said once, at its end", () => {
    const read = (q: string) => questionDates(q, now).map((r) => [iso(r.start), iso(r.end)]);
    // Before, only the last day was read ("August 15 2023"), and the first days of the stretch were not favoured.
    expect(read("Where was John between August 11 and August 15 2023?")).toEqual([["2023-08-10", "2023-08-17"]]);
    expect(read("What did I do from 3 to 10 May, 2023?")).toEqual([["2023-05-02", "2023-05-12"]]);
    expect(read("between the 3rd of May and the 10th of June 2023")).toEqual([["2023-05-02", "2023-06-12"]]);
    expect(read("between December 20 and January 3, 2024")).toEqual([["2023-12-19", "2024-01-05"]]);
    expect(read("between 1 and 2 people came in May 2023")).toEqual([["2023-05-01", "2023-06-01"]]);
    // A day typed without a space after its comma.
    expect(read("the picture shared on December 1,2023")).toEqual([["2023-11-30", "2023-12-03"]]);
  });
  it("finds nothing in questions without dates", () => {
    expect(questionDates("What is my favourite ice cream?")).toEqual([]);
    expect(questionDates("May I ask about 2022 plans?")).toEqual([]);
  });
  it("reads days said from today", () => {
    // `now` is Saturday 21 November 2026. A day comes with a day's slack either side.
    const read = (q: string, opts = {}) => questionDates(q, now, opts).map((r) => [iso(r.start), iso(r.end)]);
    expect(read("What did we cook the day before yesterday?")).toEqual([["2026-11-18", "2026-11-21"]]);
    expect(read("What did I watch last night?")).toEqual([["2026-11-19", "2026-11-22"]]);
    expect(read("What did I say three days ago?")).toEqual([["2026-11-17", "2026-11-20"]]);
    expect(read("Who did I meet two weeks ago?")).toEqual([["2026-10-31", "2026-11-15"]]);
    expect(read("What did I read 2 months ago?")).toEqual([["2026-09-01", "2026-10-01"]]);
    expect(read("What did I say a couple of days ago?")).toEqual([["2026-11-18", "2026-11-21"]]);
    expect(read("Which film did I see a few weeks ago?")).toEqual([["2026-10-24", "2026-11-08"]]);
    expect(read("Where did we travel two years ago?")).toEqual([["2024-01-01", "2025-01-01"]]);
    expect(read("What did I tell you the other day?")).toEqual([["2026-11-13", "2026-11-22"]]);
    expect(read("Where did I go last weekend?")).toEqual([["2026-11-13", "2026-11-17"]]);
    expect(read("What did I buy last Friday?")).toEqual([["2026-11-19", "2026-11-22"]]);
    // Today is a Saturday: "on Saturday" is the one before.
    expect(read("What did I eat on Saturday?")).toEqual([["2026-11-13", "2026-11-16"]]);
    expect(read("What books did I read last year?")).toEqual([["2025-01-01", "2026-01-01"]]);
    expect(read("What did I say this week?")).toEqual([["2026-11-15", "2026-11-23"]]);
    expect(read("What did I plan today?")).toEqual([["2026-11-20", "2026-11-23"]]);
    // Said from a day the question names, they count from it.
    expect(read("What did Joanna just finish last Friday on 23 January, 2022?")).toEqual([
      ["2022-01-22", "2022-01-25"],
      ["2022-01-20", "2022-01-23"],
    ]);
    expect(read("What was Tim's writing issue last week, as mentioned on November 6, 2023?")[1]).toEqual([
      "2023-10-23",
      "2023-11-06",
    ]);
    // Read for the past only (lib/memory/validity.ts), what reaches today is left out.
    expect(read("What did I plan today or this year?", { present: false })).toEqual([]);
    expect(read("Nothing happened on the weekend, I said")).toEqual([]);
  });
  it("reads a month named without its year, when asked to, as that month in each of the last ten years", () => {
    const read = (q: string) => questionDates(q, now, { yearless: true }).map((r) => [iso(r.start), iso(r.end)]);
    const novembers = read("Which country was Tim visiting in the second week of November?");
    expect(novembers).toHaveLength(10);
    expect(novembers[0]).toEqual(["2026-11-01", "2026-12-01"]);
    expect(novembers[9]).toEqual(["2017-11-01", "2017-12-01"]);
    // A month not yet begun this year starts last year.
    expect(read("Where did we go camping in December?")[0]).toEqual(["2025-12-01", "2026-01-01"]);
    expect(read("What did I plan for mid-March?")[0]).toEqual(["2026-03-01", "2026-04-01"]);
    // With its year or day it is that date only; "may" the verb, a name ("Jan's"), and without the option: nothing.
    expect(read("What happened in May 2023?")).toEqual([["2023-05-01", "2023-06-01"]]);
    expect(read("I may go hiking")).toEqual([]);
    expect(read("What did I give to Jan's sister?")).toEqual([]);
    expect(questionDates("When did Melanie go camping in June?", now)).toEqual([]);
  });
  it("reads a year only when asked to, and a pasted log's first 50 dates", () => {
    expect(questionDates("Since 2016", now, { years: true }).map((r) => [iso(r.start), iso(r.end)])).toEqual([
      ["2016-01-01", "2017-01-01"],
    ]);
    const log = Array.from({ length: 14_000 }, (_, i) => `${(i % 28) + 1} July ${2000 + (i % 20)}`).join(", ");
    const read = questionDates(log, now, { years: true });
    expect(read).toHaveLength(50);
    expect(iso(read[0].start)).toBe("2000-06-30");
  });
});

describe("asksOnlyWhen (a question about a time, not a topic)", () => {
  const now = new Date("2026-11-21T12:00:00Z");
  it.each([
    ["What did we talk about yesterday?", true],
    ["What happened last weekend?", true],
    ["what did i say on friday", true],
    ["What did we discuss on 8 May 2023?", true],
    ["What did I eat yesterday?", false],
    ["What did Jon do last Friday?", false],
    ["What did we talk about?", false],
    ["What did we talk about in the garden?", false],
  ])("%s → %s", (q, only) => {
    expect(asksOnlyWhen(q, now, { yearless: true })).toBe(only);
  });
});

describe.each(engines)("recall by date on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("a message from the date the question names comes before an equally good one from another day", async () => {
    const user = await t.db.user.create({ data: { email: `dates-${engine}@example.com` } });
    for (const [day, text] of [
      ["2022-05-01", "We watched a movie about whales tonight."],
      ["2022-08-20", "We watched a movie about sharks tonight."],
    ] as const) {
      const th = await createThread(await userContext(t.db, user.id));
      await appendItems(t.db, th.id, [{ role: "user", content: text }], { cipher: await threadCipher(t.db, th.id) });
      await t.db.item.updateMany({ where: { threadId: th.id }, data: { createdAt: new Date(`${day}T20:00:00Z`) } });
    }
    const first = async (q: string) =>
      (await recall(await userContext(t.db, user.id), q, { budget: 1000 })).passages[0].lines.join(" ");
    expect(await first("What movie did we watch on 1 May, 2022?")).toContain("whales");
    expect(await first("What movie did we watch in August 2022?")).toContain("sharks");
    // No year said: the month in an earlier year still counts (imported chats are years old).
    expect(await first("What movie did we watch in August?")).toContain("sharks");
    expect(await first("What movie did we watch in early May?")).toContain("whales");
  });

  it("a question about a day, not a topic, gets what was said that day, not merely the newest", async () => {
    const user = await t.db.user.create({ data: { email: `said-then-${engine}@example.com` } });
    const u = await userContext(t.db, user.id);
    const th = await createThread(u);
    const cipher = await threadCipher(t.db, th.id);
    const yesterday = new Date(Date.now() - 86_400_000);
    // Yesterday the garden; today, in the same thread, a long talk about the car (the newest, which fills the budget).
    await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "Let's plan the garden: tomatoes along the fence and basil by the door." },
        { role: "assistant", content: "Tomatoes want full sun, so the fence works; basil likes the warm doorstep." },
      ],
      { cipher },
    );
    await t.db.item.updateMany({ where: { threadId: th.id }, data: { createdAt: yesterday } });
    const car = "The mechanic says the brake pads are worn, the rotors are scored and the timing belt is due soon.";
    await appendItems(
      t.db,
      th.id,
      Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${car} (${i})` }) as const),
      { cipher },
    );
    const r = await recall(await userContext(t.db, user.id), "What did we talk about yesterday?", { budget: 300 });
    expect(r.passages[0].lines.join(" ")).toContain("tomatoes");
    expect(r.passages[0]).toMatchObject({ dated: true });
    expect(memoryBlock(r)).toContain("What was said on the days the question names");
    // A question with a topic of its own is ranked by its words as before.
    const topic = await recall(u, "What did the mechanic say yesterday?", { budget: 300 });
    expect(topic.passages.some((p) => p.dated)).toBe(false);
  });

  it("a message from the days a question counts back to ('three days ago') comes first", async () => {
    const user = await t.db.user.create({ data: { email: `days-ago-${engine}@example.com` } });
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);
    for (const [at, text] of [
      [daysAgo(3), "We cooked a curry with lentils tonight."],
      [daysAgo(20), "We cooked a curry with chickpeas tonight."],
    ] as const) {
      const th = await createThread(await userContext(t.db, user.id));
      await appendItems(t.db, th.id, [{ role: "user", content: text }], { cipher: await threadCipher(t.db, th.id) });
      await t.db.item.updateMany({ where: { threadId: th.id }, data: { createdAt: at } });
    }
    const first = async (q: string) =>
      (await recall(await userContext(t.db, user.id), q, { budget: 1000 })).passages[0].lines.join(" ");
    expect(await first("What curry did we cook three days ago?")).toContain("lentils");
    expect(await first("What curry did we cook 20 days ago?")).toContain("chickpeas");
  });
});
