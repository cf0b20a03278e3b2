// "Memories used" means used: which of the memories sent with a question the answer drew on, read from the
// answer's text (any model), and the signals that follow from it (use counts, ratings) for those memories only.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { memoryHistory } from "@/lib/memory/long-term";
import { addMemory, setMuted } from "@/lib/memory/store";
import { rateAnswer, signalsForMemories } from "@/lib/memory/feedback";
import { threadView } from "@/lib/chat/threads";
import { attributeMemories } from "@/lib/memory/attribution";
import { recall } from "@/lib/memory/recall";
import { embedPending } from "@/lib/memory/embed";
import { chatToolCaller, runMemoryTool } from "@/lib/memory/tools";

const FOUR = [
  { id: "dog", text: "Has a golden retriever named Biscuit" },
  { id: "job", text: "Works as a night-shift nurse at St Mary's hospital" },
  { id: "allergy", text: "Allergic to peanuts" },
  { id: "sister", text: "Has a sister who lives in Porto" },
];

describe("attributeMemories", () => {
  const cases: Array<[string, string, string[]]> = [
    [
      "Any tips to sleep better tomorrow?",
      "Keep a regular schedule, avoid screens before bed, keep the room cool.",
      [],
    ],
    ["What should I do this weekend?", "Take Biscuit for a long walk in the park; he will love fetch.", ["dog"]],
    [
      "Any tips to sleep better?",
      "Since you work night shifts as a nurse, blackout curtains help after a shift.",
      ["job"],
    ],
    ["What snack should I bring?", "Avoid anything with peanuts, given your allergy; fruit is safe.", ["allergy"]],
    ["Where should I travel?", "Porto would be lovely, and you could visit your sister there.", ["sister"]],
    [
      "Plan my day",
      "Walk Biscuit, then call your sister in Porto before your shift at the hospital.",
      ["dog", "job", "sister"],
    ],
  ];
  it.each(cases)("%s → %s", (question, answer, expected) => {
    expect(attributeMemories(answer, question, FOUR)).toEqual(expected);
  });

  it("an answer that repeats the question's words does not use a memory sharing only those words", () => {
    const q = "How do I get better sleep as a nurse?";
    expect(attributeMemories(`Good question: how to get better sleep as a nurse.`, q, FOUR)).toEqual([]);
  });

  it("a memory the model cites counts as used, though the answer shares none of its words", () => {
    const answer = "Get some fresh air first thing in the morning. [memory: Has a sister who lives]";
    expect(attributeMemories(answer, "How do I wake up better?", FOUR)).toEqual(["sister"]);
    // A citation that matches no memory well adds nothing.
    expect(attributeMemories("Rest well. [memory: likes chess]", "Tips?", FOUR)).toEqual([]);
  });

  it("a terse answer uses the memory holding what it says, though it carries little of that memory", () => {
    const sent = [
      ...FOUR,
      {
        id: "studio",
        text: "Is opening a dance studio downtown; the official opening night is next Friday, after months of renovation",
      },
      { id: "salsa", text: "Goes to salsa dance lessons on Tuesdays" },
    ];
    expect(attributeMemories("A dance studio.", "What am I working on?", sent)).toEqual(["studio"]);
    // A word two memories hold is not enough to credit either.
    expect(attributeMemories("Dancing.", "What do I do for fun?", sent)).toEqual([]);
  });

  it("an answer naming the day a memory was filed under uses the one of that day's memories about what was asked", () => {
    const day = (d: string) => new Date(`${d}T00:00:00Z`);
    const sent = [
      { id: "group", text: "Went to an LGBTQ support group", since: day("2023-05-07") },
      { id: "adoption", text: "Is researching adoption agencies", since: day("2023-05-07") },
      { id: "race", text: "Ran a charity race for mental health", since: day("2023-05-20") },
    ];
    const q = "When did I go to the LGBTQ support group?";
    // The answer shares no word with the memory it came from, only its day.
    expect(attributeMemories("On 7 May 2023.", q, sent)).toEqual(["group"]);
    // A day no memory was filed under, or a memory given without its day, credits none.
    expect(attributeMemories("On 9 June 2023.", q, sent)).toEqual([]);
    expect(
      attributeMemories(
        "On 7 May 2023.",
        q,
        sent.map(({ id, text }) => ({ id, text })),
      ),
    ).toEqual([]);
    // When that day's memories match the question equally, the date alone does not tell which was used.
    const tied = [
      { id: "a", text: "Went hiking with friends", since: day("2023-05-07") },
      { id: "b", text: "Went swimming with friends", since: day("2023-05-07") },
    ];
    expect(attributeMemories("7 May 2023", "When did I go out with friends?", tied)).toEqual([]);
  });

  it("an answer naming a date uses the memory about what was asked told in the weeks around it, not months away", () => {
    const day = (d: string) => new Date(`${d}T00:00:00Z`);
    const q = "When did I start boot camp with my family?";
    const told = (since: string) => [
      ...FOUR,
      { id: "camp", text: "Started going to boot camp with the family last month", since: day(since) },
      { id: "race", text: "Ran a charity race for mental health", since: day(since) },
    ];
    // Told in May of an event in April; a plan told in March for April.
    expect(attributeMemories("April 2023", q, told("2023-05-12"))).toEqual(["camp"]);
    expect(attributeMemories("April 2023", q, told("2023-03-20"))).toEqual(["camp"]);
    expect(attributeMemories("April 2023", q, told("2023-08-01"))).toEqual([]);
    // Dates typed in haste still name the day.
    expect(attributeMemories("April.2023", q, told("2023-05-12"))).toEqual(["camp"]);
    expect(attributeMemories("The week before 10May, 2023", q, told("2023-05-12"))).toEqual(["camp"]);
  });

  it("a year in the answer reaches the memory that counts back to it from the day it was told", () => {
    const day = (d: string) => new Date(`${d}T00:00:00Z`);
    const sent = [
      ...FOUR,
      { id: "surf", text: "Started surfing five years ago and loves being out on the water", since: day("2023-07-16") },
      { id: "turtles", text: "Has had turtles for 3 years, they keep him calm", since: day("2022-04-02") },
      { id: "trip", text: "Took a road trip up the coast last year", since: day("2023-03-10") },
      { id: "board", text: "Bought a new surf board for the summer", since: day("2023-07-16") },
    ];
    expect(attributeMemories("2018", "What year did I start surfing?", sent)).toEqual(["surf"]);
    expect(attributeMemories("In 2019", "When did I get my turtles?", sent)).toEqual(["turtles"]);
    expect(attributeMemories("2022", "When did I take the road trip?", sent)).toEqual(["trip"]);
    // A year no memory counts back to credits none.
    expect(attributeMemories("2015", "What year did I start surfing?", sent)).toEqual([]);
  });

  it("of the memories holding an answer's words, the one holding most of them is credited", () => {
    const memory = (text: string, i: number) => ({ id: `other${i}${text.length}`, text });
    const sent = [
      ...FOUR,
      { id: "aspire", text: "Aspires to get into local politics to help improve the community" },
      { id: "focus", text: "Passion in politics revolves around improving education and infrastructure in the city" },
      // "education" and "infrastructure" are in many memories, "improve" in two: "improve" alone is half the answer.
      ...["Believes education matters", "Funds education for kids", "Studied education at college"].map(memory),
      ...["Infrastructure projects run slow", "Writes on rail infrastructure", "Road infrastructure is old"].map(
        memory,
      ),
    ];
    const q = "What is my main focus in local politics?";
    expect(attributeMemories("Improving education and infrastructure", q, sent)).toEqual(["focus"]);
  });

  it("a question naming a day is about the memory told that day", () => {
    const day = (d: string) => new Date(`${d}T10:00:00Z`);
    const sent = [
      ...FOUR,
      { id: "may", text: "Busy at the shelter preparing for a fundraiser", since: day("2023-05-25") },
      { id: "march", text: "Planning a ring-toss tournament for the shelter's fundraiser", since: day("2023-03-01") },
    ];
    const q = "What event was I getting ready for at the shelter on May 25, 2023?";
    expect(attributeMemories("A fundraiser", q, sent)).toEqual(["may"]);
    expect(attributeMemories("A fundraiser", "What event was I getting ready for at the shelter?", sent)).toEqual([]);
  });

  it("a light verb the question uses ('go') does not make a memory the question's best match", () => {
    const day = (d: string) => new Date(`${d}T00:00:00Z`);
    const sent = [
      ...FOUR,
      {
        id: "group",
        text: "Attended an LGBTQ support group and found the stories inspiring",
        since: day("2023-05-08"),
      },
      { id: "swim", text: "Is going swimming with the kids after work", since: day("2023-05-08") },
      // Each of the question's other words is in more memories than "go" is.
      { id: "rights", text: "Speaks up for LGBTQ rights at the support centre", since: day("2023-01-02") },
      { id: "chat", text: "Runs the LGBTQ book group chat", since: day("2023-01-02") },
      { id: "friends", text: "Has support from a group of old friends", since: day("2023-01-02") },
    ];
    const q = "When did I go to the LGBTQ support group?";
    expect(attributeMemories("7 May 2023", q, sent)).toEqual(["group"]);
  });

  it("an answer listing things uses the memory behind each item", () => {
    const sent = [
      ...FOUR,
      { id: "piano", text: "Plays the piano at home most evenings after a long day at the office downtown" },
      { id: "violin", text: "Started to play the violin last spring with a teacher from the conservatory" },
      { id: "drums", text: "Plays the drums on Saturdays in a garage with two neighbours from the street" },
      { id: "band", text: "Watched a jazz band play at the harbour festival with old school friends" },
    ];
    const q = "Which instruments do I play?";
    expect(attributeMemories("Piano, violin and drums.", q, sent)).toEqual(["piano", "violin", "drums"]);
    expect(attributeMemories("The piano; the drums; the violin", q, sent)).toEqual(["piano", "violin", "drums"]);
    // One item alone is not a list: what it says must still be most of what a memory holds for the answer.
    expect(attributeMemories("Jazz.", q, sent)).toEqual(["band"]);
    // A list is read for its first 200 different items: what a memory gave shows long before a list's end.
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `thing${i}`);
    expect(attributeMemories([...filler(150), "violin"].join(", "), q, sent)).toEqual(["violin"]);
    expect(attributeMemories([...filler(250), "violin"].join(", "), q, sent)).toEqual([]);
    expect(attributeMemories([...Array(500).fill("ukulele"), "violin"].join(", "), q, sent)).toEqual(["violin"]);
  });

  it("a short reply that carries no memory's words uses the memory the question is clearly about", () => {
    const sent = [
      ...FOUR,
      { id: "bowl", text: "Made a black and white bowl in pottery class" },
      { id: "vase", text: "Bought a blue vase at the market" },
    ];
    const q = "Did I make the black and white bowl in the photo?";
    expect(attributeMemories("Yes!", q, sent)).toEqual(["bowl"]);
    expect(attributeMemories("Yes, you made it yourself.", q, sent)).toEqual(["bowl"]);
    // Saying it does not know, or answering at length with none of its words, uses nothing.
    expect(attributeMemories("I don't know, sorry.", q, sent)).toEqual([]);
    expect(attributeMemories("No idea.", q, sent)).toEqual([]);
    expect(attributeMemories("Sure. ".repeat(50), q, sent)).toEqual([]);
    // A question no memory clearly matches: nothing.
    expect(attributeMemories("Yes.", "Did I like the photo I took?", sent)).toEqual([]);
  });

  it("a terse answer whose word several memories hold uses the one of them about what was asked", () => {
    const sent = [
      ...FOUR,
      { id: "recommended", text: "Recommended Barcelona to Tim as a must-visit city for its architecture" },
      { id: "trip", text: "Took a work trip to Barcelona in March" },
    ];
    expect(attributeMemories("Barcelona.", "Which city did I recommend to Tim?", sent)).toEqual(["recommended"]);
    // A question matching neither of them credits none.
    expect(attributeMemories("Barcelona.", "Where to next?", sent)).toEqual([]);
  });

  it("a number of one digit is what the answer carries", () => {
    const sent = [
      ...FOUR,
      { id: "party", text: "Hosted a gaming party with 7 guests" },
      { id: "cat", text: "Has 2 cats and a gaming chair" },
    ];
    expect(attributeMemories("7", "How many people came to my gaming party?", sent)).toEqual(["party"]);
    expect(attributeMemories("3", "How many people came to my gaming party?", sent)).toEqual([]);
  });

  it("a memory about someone the question does not ask about is not what the answer used", () => {
    const sent = [
      ...FOUR,
      { id: "caroline", text: "Caroline's friends, family and mentors are her rocks, giving her strength" },
      { id: "melanie", text: "Melanie says her family keeps her going when times are hard" },
      { id: "both", text: "Melanie admires how Caroline finds strength in her family" },
      { id: "paints", text: "Caroline paints on Sunday mornings" },
    ];
    // "strength" is only in Caroline's memories; the question asks about Melanie ("Mel" is her short name).
    const q = "What do Melanie's family give her?";
    expect(attributeMemories("Strength", q, sent)).toEqual(["both"]);
    expect(attributeMemories("Strength", "What do Mel's family give her?", sent)).toEqual(["both"]);
    expect(attributeMemories("Strength", "What do Caroline's family give her?", sent)).toEqual(["caroline"]);
    // A question naming no one: the word decides, as before.
    const family = [...FOUR, sent[4], sent[5]];
    expect(attributeMemories("Strength and mentors", "What does family give?", family)).toEqual(["caroline"]);
    // The model's own citation stands, whoever the memory is about.
    expect(attributeMemories("Strength [memory: Caroline's friends, family and mentors]", q, sent)).toContain(
      "caroline",
    );
    // A name opening one memory alone may be a place, not someone else.
    const place = [
      ...FOUR,
      { id: "braga", text: "Braga is where my sister found a flat" },
      { id: "aunt", text: "Visited my aunt in Braga at Easter" },
    ];
    expect(attributeMemories("Braga", "Where did Anna's sister find a flat?", place)).toEqual(["braga"]);
  });

  it("of two memories matching a dated question alike, the one about the person asked about is used", () => {
    const day = new Date("2023-07-12T10:00:00Z");
    const sent = [
      ...FOUR,
      { id: "melanie", text: "Melanie finds LGBTQ events like the conference Caroline attended moving", since: day },
      { id: "caroline", text: "Caroline attended an LGBTQ conference and felt accepted", since: day },
      { id: "paints", text: "Caroline paints on Sunday mornings" },
      { id: "bakes", text: "Melanie bakes bread for her kids" },
    ];
    const q = "When did Caroline go to the LGBTQ conference?";
    expect(attributeMemories("10 July 2023", q, sent)).toEqual(["caroline"]);
  });

  it("of memories told alike in the weeks around an answer's date, the one told nearest it is used", () => {
    const day = (d: string) => new Date(`${d}T10:00:00Z`);
    const sent = [
      ...FOUR,
      { id: "early", text: "Went to a pride parade and felt at home", since: day("2023-07-03") },
      { id: "later", text: "Went to a pride parade with the activist group", since: day("2023-07-20") },
      { id: "work", text: "Started a new job at the library", since: day("2023-07-04") },
    ];
    const q = "When did I go to a pride parade?";
    expect(attributeMemories("The week before 3 July 2023", q, sent)).toEqual(["early"]);
    expect(attributeMemories("19 July 2023", q, sent)).toEqual(["later"]);
    // Only whom the question asks about in common: a date near one of them picks none.
    const named = [
      ...FOUR,
      { id: "a", text: "Lena started a new job at the library", since: day("2023-07-03") },
      { id: "b", text: "Lena moved to a flat near the river", since: day("2023-07-20") },
    ];
    expect(attributeMemories("3 July 2023", "When did Lena have a picnic?", named)).toEqual([]);
  });

  it("a count uses every memory it counted", () => {
    const sent = [
      ...FOUR,
      { id: "first", text: "Won my first chess tournament at the club" },
      { id: "online", text: "Won an online chess tournament against strong players" },
      { id: "lost", text: "Lost in the chess club final" },
      { id: "cup", text: "Won the city cup with 7 wins in 9 rounds" },
    ];
    const q = "How many chess tournaments have I won?";
    expect(attributeMemories("Two", q, sent)).toEqual(["first", "online"]);
    expect(attributeMemories("2 tournaments.", q, sent)).toEqual(["first", "online"]);
    // Not a count, or not a counting question: as before, the clearly best memory or none.
    expect(attributeMemories("Two", "Which chess tournament did I win?", sent)).toEqual([]);
  });

  it("nothing is used by an empty answer", () => {
    expect(attributeMemories("", "Tell me about Biscuit", FOUR)).toEqual([]);
  });
});

describe.each(engines)("attribution in a turn on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  beforeAll(async () => {
    mock = await startMockLlm();
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `attr-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  it("lists only the memory the answer drew on; a 👎 changes only that memory's signals", async () => {
    const user = (await t.db.user.create({ data: { email: `attr-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const ids = new Map<string, string>();
    for (const m of FOUR) ids.set(m.id, (await addMemory(u, { text: m.text, source: "manual" }, "user", "t")).id);
    mock.script({ match: "weekend", content: "Take Biscuit to the beach: golden retrievers love the water." });
    mock.script({ match: "Feedback on an answer", json: { lesson: null }, times: 0 });

    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Ideas for the weekend?" }));
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.memoriesUsed.map((m) => m.id)).toEqual([ids.get("dog")]);
    expect(done.alsoGiven.map((m) => m.id).sort()).toEqual(
      [...ids.values()].filter((i) => i !== ids.get("dog")).sort(),
    );
    // All four were sent: attribution is about use, not about what the model saw.
    const sent = JSON.stringify(mock.chatRequests().at(-1)!.body.messages);
    for (const m of FOUR) expect(sent).toContain(m.text);

    // The thread shows the same split after a reload.
    const start = events[0] as Extract<TurnEvent, { type: "start" }>;
    const view = await threadView(u, start.threadId);
    const answer = view.items.find((i) => i.id === done.item.id)!;
    expect(answer.memoriesUsed.map((m) => m.id)).toEqual([ids.get("dog")]);
    expect(answer.alsoGiven).toHaveLength(3);

    await rateAnswer(u, { itemId: done.item.id, rating: -1 });
    const signals = await signalsForMemories(t.db, user, [...ids.values()]);
    expect(signals.get(ids.get("dog")!)).toMatchObject({ answers: 1, down: 1 });
    for (const [name, id] of ids) if (name !== "dog") expect(signals.get(id)).toBeUndefined();
    const counts = await t.db.memory.findMany({ where: { userId: user }, select: { id: true, useCount: true } });
    for (const m of counts) expect(m.useCount).toBe(m.id === ids.get("dog") ? 1 : 0);
  });

  it("an answer that gives a date uses the memory filed under that day in the prompt", async () => {
    const user = (await t.db.user.create({ data: { email: `dated-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const ids = new Map<string, string>();
    for (const [name, text, day] of [
      ["group", "Went to an LGBTQ support group", "2023-05-07"],
      ["adoption", "Is researching adoption agencies", "2023-05-07"],
      ["race", "Ran a charity race for mental health", "2023-05-20"],
    ]) {
      const m = await addMemory(u, { text, source: "manual" }, "user", "t");
      await t.db.memory.update({ where: { id: m.id }, data: { validFrom: new Date(`${day}T10:00:00Z`) } });
      ids.set(name, m.id);
    }
    mock.script({ match: "support group", content: "On 7 May 2023." });
    const events = await collect(
      runTurn(t.db, user, { kind: "send", content: "When did I go to the LGBTQ support group?" }),
    );
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    // The prompt filed the memories under their days; the answer named one of them.
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body.messages)).toContain("2023-05-07:");
    expect(done.memoriesUsed).toEqual([{ id: ids.get("group"), text: "Went to an LGBTQ support group" }]);
    expect(done.alsoGiven.map((m) => m.id).sort()).toEqual([ids.get("adoption"), ids.get("race")].sort());
  });

  it("with an embedding model, an answer close in meaning to a memory it was given counts as using it", async () => {
    const user = (await t.db.user.create({ data: { email: `meaning-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const ids = new Map<string, string>();
    for (const m of FOUR) ids.set(m.id, (await addMemory(u, { text: m.text, source: "manual" }, "user", "t")).id);
    const admin = await t.db.user.findFirstOrThrow({ where: { role: "ADMIN", email: { startsWith: "attr-admin" } } });
    const model = { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" };
    await saveConnection(t.db, { ...model, embeddingModel: "mock-embed-48" }, admin.id);
    clearConnectionCache(t.db);
    try {
      await embedPending(t.db, { userId: user }); // the memories' vectors
      // No word of the memory in the answer, but the same meaning (the test server embeds it like the memory).
      mock.script({ match: "evening", content: "A calm stroll with your four-legged friend would be perfect." });
      mock.scriptEmbeddings({ match: "four-legged friend", like: "Has a golden retriever named Biscuit" });
      const events = await collect(runTurn(t.db, user, { kind: "send", content: "Plans for the evening?" }));
      const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
      expect(done.memoriesUsed).toEqual([]); // words alone found nothing
      await embedPending(t.db, { userId: user }); // the answer's vector, as the embed job makes it
      const view = await threadView(u, (events[0] as Extract<TurnEvent, { type: "start" }>).threadId);
      const answer = view.items.find((i) => i.id === done.item.id)!;
      expect(answer.memoriesUsed.map((m) => m.id)).toEqual([ids.get("dog")]);
      const dog = await t.db.memory.findUniqueOrThrow({ where: { id: ids.get("dog")! } });
      expect(dog.useCount).toBe(1);
      // A second pass changes nothing.
      await embedPending(t.db, { userId: user });
      expect((await t.db.memory.findUniqueOrThrow({ where: { id: dog.id } })).useCount).toBe(1);
    } finally {
      await saveConnection(t.db, model, admin.id);
      clearConnectionCache(t.db);
    }
  });

  it("the prompt asks for citations; the answer is saved and shown without them, and they count", async () => {
    const user = (await t.db.user.create({ data: { email: `cite-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const ids = new Map<string, string>();
    for (const m of FOUR) ids.set(m.id, (await addMemory(u, { text: m.text, source: "manual" }, "user", "t")).id);
    mock.script({ match: "morning", content: "Try a short walk at sunrise. [memory: Allergic to peanuts] Eat well." });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "A good morning routine?" }));
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body.messages)).toContain("[memory: its first few words]");
    expect(done.item.content).toBe("Try a short walk at sunrise. Eat well.");
    expect(done.memoriesUsed.map((m) => m.id)).toEqual([ids.get("allergy")]);
    const view = await threadView(u, (events[0] as Extract<TurnEvent, { type: "start" }>).threadId);
    expect(view.items.find((i) => i.id === done.item.id)?.content).toBe("Try a short walk at sunrise. Eat well.");
  });

  it('a memory marked "don\'t mention this" is kept but reaches no model: not the prompt, the tools or learning', async () => {
    const user = (await t.db.user.create({ data: { email: `muted-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const kept = await addMemory(u, { text: "Training for the Lisbon marathon", source: "manual" }, "user", "t");
    const hidden = await addMemory(
      u,
      { text: "Recovering from a marathon knee injury", source: "manual" },
      "user",
      "t",
    );
    await setMuted(u, hidden.id, true);
    mock.script({
      match: "marathon",
      toolCalls: [{ name: "search_memory", arguments: JSON.stringify({ query: "marathon knee" }) }],
    });
    mock.script({ match: "Existing related memories", json: { decisions: [] }, times: 0 });

    await collect(runTurn(t.db, user, { kind: "send", content: "How should I train for my marathon knee?" }));
    const requests = JSON.stringify(mock.chatRequests().map((r) => r.body.messages));
    expect(requests).toContain(kept.text);
    expect(requests).not.toContain(hidden.text);
    // Kept, and still the user's to see.
    const row = await t.db.memory.findUniqueOrThrow({ where: { id: hidden.id } });
    expect(row).toMatchObject({ status: "active", muted: true });
    const history = await memoryHistory(u, hidden.id);
    expect(history[0].reason).toBe("Marked: don't mention this");

    // Mentionable again: it is back in the prompt.
    await setMuted(u, hidden.id, false);
    mock.reset();
    await collect(runTurn(t.db, user, { kind: "send", content: "And for my knee?" }));
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body.messages)).toContain(hidden.text);
  });

  it('"remember this for a week" keeps it a week: recall leaves it out once the time is up', async () => {
    const user = (await t.db.user.create({ data: { email: `expiry-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const before = Date.now();
    mock.script({
      match: "for a week",
      toolCalls: [{ name: "remember", arguments: JSON.stringify({ text: "Staying at Hotel Miramar", forDays: 7 }) }],
    });
    await collect(runTurn(t.db, user, { kind: "send", content: "Remember for a week: I'm at Hotel Miramar" }));
    const m = await t.db.memory.findFirstOrThrow({ where: { userId: user, text: { contains: "Miramar" } } });
    const days = (m.expiresAt!.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThan(7.01);
    const recalled = async () => (await recall(u, "Which hotel am I at?", { budget: 500 })).memories.map((r) => r.id);
    expect(await recalled()).toContain(m.id);
    // The week passes (the clock is the database's): the memory stays, and recall leaves it out.
    await t.db.memory.update({ where: { id: m.id }, data: { expiresAt: new Date(Date.now() + 1500) } });
    expect(await recalled()).toContain(m.id);
    // The model's own list ("what do you know about me?") still has it until then.
    const listed = async () =>
      (
        await runMemoryTool(
          chatToolCaller(u, { threadId: "t", itemId: "i", userMessage: "What do you know?", paused: false }),
          "search_memory",
          '{"query":""}',
        )
      ).result;
    expect(await listed()).toContain("Miramar");
    await new Promise((r) => setTimeout(r, 2000));
    expect(await recalled()).not.toContain(m.id);
    expect(await listed()).not.toContain("Miramar");
    expect(await t.db.memory.count({ where: { id: m.id, status: "active" } })).toBe(1);
  });
});
