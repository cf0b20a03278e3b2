// Everyday failures that must never break a turn, lose what the user typed,
// leave an answer stuck or show internals: awkward text, a stalled model, a
// process that dies mid-answer or right after it, another user's Stop,
// cross-site requests, partial imports, and a database that cannot be reached.
process.env.MNEMO_MODEL_IDLE_TIMEOUT_SECONDS = "1";
process.env.MNEMO_JOB_LANES = "2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, stopTurn, type TurnEvent } from "@/lib/chat/turn";
import { createThread, threadView } from "@/lib/chat/threads";
import { provisionalTitle } from "@/lib/chat/titles";
import { appendItems } from "@/lib/memory/session";
import { sweepExpiredAnswers } from "@/lib/chat/leases";
import { partialSaver } from "@/lib/chat/generations";
import { drainJobs, runDueJobs, startWorker } from "@/lib/jobs/worker";
import { claim, LOCK_SECONDS, queueHealth, renewLock, type JobKind } from "@/lib/jobs/queue";
import { importMemories } from "@/lib/memory/portable";
import { redactSecrets } from "@/lib/memory/secrets";
import { cleanText, cutGraphemes, truncate } from "@/lib/text/policy";
import { publicError, CHANGED_MEANWHILE, DATABASE_DOWN } from "@/lib/errors";
import { assertSameOrigin, boundedRequest, readJson } from "@/lib/http/route";
import { NextRequest } from "next/server";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

describe("text policy", () => {
  it("never cuts an emoji or a combined character in half, wherever the cut falls", () => {
    const emoji = ["😀", "👩‍👩‍👧‍👦", "🇵🇹", "é", "👍🏽"];
    for (const e of emoji) {
      for (let at = 50; at < 62; at++) {
        const text = "a".repeat(at) + e + " and more words after the emoji to pass sixty characters";
        const title = provisionalTitle(text);
        expect(cleanText(title)).toBe(title); // no lone surrogate
        expect(title.length).toBeLessThanOrEqual(60);
        const kept = title.replace(/…$/, "");
        expect(text.startsWith(kept.trimEnd())).toBe(true);
      }
    }
    expect(cutGraphemes("ab👩‍👩‍👧‍👦", 5)).toBe("ab");
    expect(truncate("short", 10)).toBe("short");
    // A pasted document's title is its first words, however much space comes before them.
    const pasted = provisionalTitle(" \n".repeat(5_000) + "Plan   the\ttrip " + "word ".repeat(1_000_000));
    expect(pasted).toMatch(/^Plan the trip word word .*…$/);
    expect(pasted.length).toBeLessThanOrEqual(60);
  });

  it("cuts where walking every cluster from the start would, deep into long text", () => {
    // Runs whose clusters depend on what came long before the cut (a flag is a pair of regional indicators), or
    // reach far past it (hundreds of accents on one letter), among emoji sequences and CRLF.
    const parts = ["🇵🇹".repeat(300), "e" + "\u0301".repeat(200), "👩‍👩‍👧‍👦", "\r\n", "👍🏽", "plain words ", "한국어 "];
    let text = "";
    for (let i = 0; text.length < 20_000; i++) text += parts[(i * 7) % parts.length] + "x".repeat(i % 5);
    const segments = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)];
    const walked = (max: number) => {
      let end = 0;
      for (const { index, segment } of segments) {
        if (index + segment.length > max) break;
        end = index + segment.length;
      }
      return text.slice(0, end);
    };
    for (let max = 0; max < text.length; max += 37) expect(cutGraphemes(text, max)).toBe(walked(max));
  });

  it("removes NUL and replaces lone surrogates, keeping valid pairs", () => {
    expect(cleanText("a\u0000b")).toBe("ab");
    expect(cleanText("x\uD800y")).toBe("x\uFFFDy");
    expect(cleanText("x\uDC00")).toBe("x\uFFFD");
    expect(cleanText("ok 😀")).toBe("ok 😀");
  });

  it("does not take ordinary numbers for card numbers, but still catches real ones", () => {
    expect(redactSecrets("fact 12 1795316601756").redacted).toEqual([]);
    expect(redactSecrets("order 1234 5678 9012 3452 shipped").redacted).toEqual([]); // not a card network's prefix
    expect(redactSecrets("my card is 4111 1111 1111 1111").redacted).toEqual(["card number"]);
    expect(redactSecrets("card 5500-0000-0000-0004").redacted).toEqual(["card number"]);
    expect(redactSecrets("amex 378282246310005").redacted).toEqual(["card number"]);
  });
});

describe("requests", () => {
  const post = (headers: Record<string, string>, body = "{}") =>
    new Request("http://mnemo.test/api/chat", { method: "POST", headers, body });

  it("refuses cross-site and cross-origin browser requests, allows same-origin ones", () => {
    expect(() =>
      assertSameOrigin(post({ host: "mnemo.test", origin: "http://mnemo.test", "sec-fetch-site": "same-origin" })),
    ).not.toThrow();
    expect(() => assertSameOrigin(post({ host: "mnemo.test" }))).not.toThrow(); // not a browser
    expect(() =>
      assertSameOrigin(post({ host: "mnemo.test", origin: "http://mnemo.test:8080", "sec-fetch-site": "same-site" })),
    ).toThrow(/Cross-site/);
    expect(() => assertSameOrigin(post({ host: "mnemo.test", origin: "http://evil.mnemo.test" }))).toThrow(
      /Cross-site/,
    );
    expect(() => assertSameOrigin(post({ host: "mnemo.test", origin: "null" }))).toThrow(/Cross-site/);
  });

  it("accepts only JSON bodies, cleaned by the text policy", async () => {
    await expect(readJson(post({ "content-type": "text/plain" }))).rejects.toMatchObject({ status: 415 });
    await expect(readJson(post({ "content-type": "application/x-www-form-urlencoded" }, "a=b"))).rejects.toMatchObject({
      status: 415,
    });
    await expect(readJson(post({ "content-type": "application/json" }, "{nope"))).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      readJson(post({ "content-type": "application/json" }, JSON.stringify({ a: "x\u0000\uD800" }))),
    ).resolves.toEqual({ a: "x\uFFFD" });
    await expect(
      readJson(post({ "content-type": "application/json" }, JSON.stringify({ a: "x".repeat(200) })), 100),
    ).rejects.toMatchObject({ status: 413 });
  });

  it("a body sent without a length is read only to the limit: an endless one is refused, not held in memory", async () => {
    const streamed = (chunk: () => Uint8Array | null) => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const c = chunk();
          if (!c) return controller.close();
          pulled += c.byteLength;
          controller.enqueue(c);
        },
      });
      const request = new Request("http://mnemo.test/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit);
      return { request, pulled: () => pulled };
    };
    // Endless: the previous code read it whole first (never, here; in a server, until memory ran out).
    const endless = streamed(() => new Uint8Array(64 * 1024).fill(32));
    await expect(readJson(endless.request, 1_000_000)).rejects.toMatchObject({ status: 413 });
    expect(endless.pulled()).toBeLessThan(1_000_000 + 3 * 64 * 1024);
    // Within the limit it is read whole, a character split between two chunks included.
    const bytes = new TextEncoder().encode(JSON.stringify({ a: "café ok" }));
    const cut = bytes.indexOf(0xc3) + 1;
    const parts = [bytes.slice(0, cut), bytes.slice(cut)];
    await expect(readJson(streamed(() => parts.shift() ?? null).request, 100)).resolves.toEqual({ a: "café ok" });
    // Sign-in's body, read before Auth.js (which reads any body whole): bounded the same way, passed on intact.
    const signIn = streamed(() => new Uint8Array(64 * 1024).fill(97));
    await expect(boundedRequest(new NextRequest(signIn.request), 64 * 1024)).rejects.toMatchObject({ status: 413 });
    expect(signIn.pulled()).toBeLessThan(4 * 64 * 1024);
    const form = "email=a%40b.test&password=x";
    const small = await boundedRequest(new NextRequest(post({ "content-type": "text/plain" }, form)), 64 * 1024);
    expect([small.method, small.headers.get("content-type"), await small.text()]).toEqual(["POST", "text/plain", form]);
  });

  it("an unreachable database is a 503 with a plain sentence; other errors show only a reference", () => {
    const down = Object.assign(
      new Error("Invalid `prisma.item.update()` invocation: Can't reach database server at 127.0.0.1:5432"),
      { code: "P1001" },
    );
    expect(publicError(down, "test")).toMatchObject({ status: 503, message: DATABASE_DOWN });
    const other = publicError(new Error('column "searchTokens" of relation "Item" does not exist'), "test");
    expect(other.status).toBe(500);
    expect(other.message).not.toMatch(/searchTokens|Item|column/);
    expect(other.message).toContain(other.ref!);
  });
});

describe.each(engines)("turns and background work on %s", (engine) => {
  let t: TestDb;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    t = await createTestDb(engine);
    alice = (await t.db.user.create({ data: { email: `hard-a-${engine}@example.com` } })).id;
    bob = (await t.db.user.create({ data: { email: `hard-b-${engine}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, alice);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("a write to a row deleted since the request checked it says so (409), not 'something went wrong'", async () => {
    const m = await t.db.memory.create({ data: { userId: alice, text: "Keeps bees", source: "manual" } });
    await t.db.memory.delete({ where: { id: m.id } });
    const err = await t.db.memory.update({ where: { id: m.id }, data: { pinned: true } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(publicError(err, "test")).toMatchObject({ status: 409, message: CHANGED_MEANWHILE });
  });

  it("a first message with an emoji at the title's cut point, NULs and lone surrogates is answered", async () => {
    const content = `${"x".repeat(56)}😀 tail of the first message\u0000 with a lone \uD83D surrogate`;
    const events = await collect(runTurn(t.db, alice, { kind: "send", content }));
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.type).toBe("done");
    const threadId = (events[0] as { threadId: string }).threadId;
    const view = await threadView(await userContext(t.db, alice), threadId);
    expect(view.items[0].content).toBe(`${"x".repeat(56)}😀 tail of the first message with a lone \uFFFD surrogate`);
    expect(cleanText(view.thread.title!)).toBe(view.thread.title);
    // Stream events carry no internal columns.
    expect(Object.keys(done.item)).not.toContain("userId");
    expect(Object.keys(done.item)).not.toContain("searchTokens");
  });

  it("a web answer of megabytes is kept as a client's message is: its first 1,000,000 characters, marked", async () => {
    // Sent as 30 chunks of 50,000 characters (the mock sends a chunk per word).
    const words = Array.from({ length: 300_000 }, (_, i) => (i * 7919).toString(36))
      .map((w, i) => w + (i % 10_000 === 9_999 ? " " : "-"))
      .join("");
    mock.script({ match: "say it all", content: words });
    const events = await collect(runTurn(t.db, alice, { kind: "send", content: "say it all" }));
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.type).toBe("done");
    const stored = await t.db.item.findUniqueOrThrow({ where: { id: done.item.id } });
    expect(stored.content.startsWith(words.slice(0, 999_000))).toBe(true);
    expect(stored.content).toMatch(/\[cut at 1,000,000 characters when stored\]$/);
    // What the browser is handed at the end is what a reload shows.
    expect(done.item.content).toBe(stored.content);
  });

  it("an answer of megabytes is saved while it streams as it will be kept: its first 1,000,000 characters", async () => {
    const th = await createThread(await userContext(t.db, alice), {});
    const cipher = await threadCipher(t.db, th.id);
    const [, a] = await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "a long one" },
        { role: "assistant", status: "streaming", content: "" },
      ],
      { cipher },
    );
    const saver = partialSaver(t.db, cipher, () => a.id, new AbortController());
    await new Promise((r) => setTimeout(r, 600)); // a save is due once half a second has passed
    saver.maybe("word ".repeat(300_000));
    await saver.done();
    const row = await t.db.item.findUniqueOrThrow({ where: { id: a.id } });
    const content = cipher.open(row.content);
    expect(content.startsWith("word ".repeat(199_999))).toBe(true);
    expect(content).toMatch(/\[cut at 1,000,000 characters when stored\]$/);
  });

  it("a model stream that stalls after its first chunk fails after the idle timeout, keeping the text", async () => {
    mock.script({ match: "stall please", content: "First words then nothing more ever", stallAfterChunks: 2 });
    const started = Date.now();
    const events = await collect(runTurn(t.db, alice, { kind: "send", content: "stall please" }));
    expect(Date.now() - started).toBeLessThan(10_000);
    const last = events.at(-1) as Extract<TurnEvent, { type: "error" }>;
    expect(last.type).toBe("error");
    expect(last.message).toMatch(/stopped sending/);
    expect(last.item).toMatchObject({ status: "failed", content: "First words " });
  });

  it("Stop by another user neither changes the answer nor aborts the generation in this process", async () => {
    mock.script({ match: "slow answer", content: "one two three four five six", chunkDelayMs: 150 });
    const gen = runTurn(t.db, alice, { kind: "send", content: "slow answer" });
    const start = (await gen.next()).value as Extract<TurnEvent, { type: "start" }>;
    expect(await stopTurn(t.db, bob, start.assistantItemId)).toBe(false);
    const rest: TurnEvent[] = [];
    for await (const e of gen) rest.push(e);
    const done = rest.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.item).toMatchObject({ status: "complete", content: "one two three four five six" });
    // The owner's Stop does act.
    mock.script({ match: "slow again", content: "one two three four five six", chunkDelayMs: 150 });
    const gen2 = runTurn(t.db, alice, { kind: "send", content: "slow again" });
    const s2 = (await gen2.next()).value as Extract<TurnEvent, { type: "start" }>;
    expect(await stopTurn(t.db, alice, s2.assistantItemId)).toBe(true);
    const rest2: TurnEvent[] = [];
    for await (const e of gen2) rest2.push(e);
    expect((rest2.at(-1) as Extract<TurnEvent, { type: "done" }>).item.status).toBe("stopped");
  });

  it("an answer whose writer died is marked interrupted with its partial text, and can be retried", async () => {
    const th = await createThread(await userContext(t.db, alice), {});
    const [, a] = await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "question before the crash" },
        { role: "assistant", status: "streaming", content: "half an ans" },
      ],
      { cipher: await threadCipher(t.db, th.id) },
    );
    // A lease that ran out, as a killed process leaves it.
    await t.db.item.update({ where: { id: a.id }, data: { leaseExpiresAt: new Date(Date.now() - 60_000) } });
    const view = await threadView(await userContext(t.db, alice), th.id);
    expect(view.items.at(-1)).toMatchObject({ id: a.id, status: "interrupted", content: "half an ans" });
    expect(await sweepExpiredAnswers(t.db)).toBe(0); // already swept, once
    const retry = await collect(runTurn(t.db, alice, { kind: "regenerate", threadId: th.id, itemId: a.id }));
    expect((retry.at(-1) as Extract<TurnEvent, { type: "done" }>).item.status).toBe("complete");
  });

  it("an answer that is still being written is not swept", async () => {
    mock.script({ match: "keep writing", content: "a b c d e", chunkDelayMs: 100 });
    const gen = runTurn(t.db, alice, { kind: "send", content: "keep writing" });
    await gen.next();
    await gen.next();
    expect(await sweepExpiredAnswers(t.db)).toBe(0);
    for await (const _ of gen) void _;
  });

  it("a process killed right after the answer still learns from it: the work is queued in the database", async () => {
    mock.script({ match: "I adopted a cat named Miso", content: "Congratulations on Miso!" });
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "ADD", text: "Has a cat named Miso", kind: "fact", confidence: 0.9 }] },
    });
    // No defer, no after(): nothing runs in this "process" after the answer.
    const events = await collect(runTurn(t.db, alice, { kind: "send", content: "I adopted a cat named Miso" }));
    expect(events.at(-1)?.type).toBe("done");
    expect(await t.db.memory.count({ where: { userId: alice } })).toBe(0);
    const queued = await t.db.job.findMany({ where: { userId: alice, status: "queued" } });
    expect(queued.map((j) => j.kind).sort()).toContain("extract");
    expect(JSON.stringify(queued.map((j) => j.payload))).not.toContain("Miso"); // ids only
    // "Restart": a worker picks the jobs up.
    const stats = await runDueJobs(t.db);
    expect(stats.failed).toBe(0);
    const mems = await t.db.memory.findMany({ where: { userId: alice } });
    expect(mems.map((m) => m.text)).toContain("Has a cat named Miso");
    // Running the queue again does nothing twice.
    expect((await runDueJobs(t.db)).done).toBe(0);
  });

  it("answers finishing together share one job drain that runs at most MNEMO_JOB_LANES jobs at once", async () => {
    // The queued work behind each answer (title, learning) waits 150 ms on the model.
    mock.script({ system: "Give this conversation a title", content: "A title", delayMs: 150, times: 0 });
    mock.script({ match: "latest exchange", json: { decisions: [] }, delayMs: 150, times: 0 });
    const deferred: Array<() => Promise<void>> = [];
    for (let i = 0; i < 6; i++) {
      const events = await collect(
        runTurn(t.db, alice, { kind: "send", content: `burst ${i}` }, { defer: (task) => deferred.push(task) }),
      );
      expect(events.at(-1)?.type).toBe("done");
    }
    expect(deferred).toHaveLength(6);
    const pending = { userId: alice, status: { in: ["queued" as const, "running" as const] } };
    const queued = await t.db.job.count({ where: pending });
    expect(queued).toBeGreaterThanOrEqual(12); // a title and a learning job per answer
    // All six answers' after() tasks start at once, as under load.
    let maxRunning = 0;
    let draining = true;
    const sampler = (async () => {
      while (draining) {
        maxRunning = Math.max(maxRunning, await t.db.job.count({ where: { userId: alice, status: "running" } }));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const tasks = deferred.map((task) => task());
    await Promise.all(tasks);
    draining = false;
    await sampler;
    expect(await t.db.job.count({ where: pending })).toBe(0);
    expect(maxRunning).toBe(2);
    // No embedding model is set: learning queued no embedding work that could only do nothing.
    expect(await t.db.job.count({ where: { userId: alice, kind: "embed" } })).toBe(0);
    // Joining an idle process's drain starts one; a second call while it runs joins it.
    const a = drainJobs(t.db);
    expect(drainJobs(t.db)).toBe(a);
    await a;
  });

  it("a stopping worker finishes the jobs it is running and claims no more; the rest stay queued", async () => {
    await runDueJobs(t.db); // what earlier tests left queued
    mock.script({ system: "Give this conversation a title", content: "A title", delayMs: 200, times: 0 });
    mock.script({ match: "latest exchange", json: { decisions: [] }, delayMs: 200, times: 0 });
    for (let i = 0; i < 4; i++) await collect(runTurn(t.db, alice, { kind: "send", content: `shutdown ${i}` }));
    const queued = await t.db.job.findMany({ where: { userId: alice, status: "queued" }, select: { id: true } });
    expect(queued).toHaveLength(8); // a title and a learning job per answer
    const count = (status: "queued" | "running" | "done") =>
      t.db.job.count({ where: { id: { in: queued.map((j) => j.id) }, status } });
    const stop = startWorker(async () => t.db, { pollMs: 50 });
    while (!(await count("running"))) await new Promise((r) => setTimeout(r, 10));
    await stop();
    expect(await count("running")).toBe(0);
    const done = await count("done");
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThanOrEqual(2); // the two lanes' jobs in flight
    expect(await count("queued")).toBe(8 - done);
    // Work queued later still runs: the drain is not left stopped.
    await drainJobs(t.db);
    expect(await count("done")).toBe(8);
  });

  it("the admin's queue health shows how long the oldest due job has waited; a job scheduled later does not count", async () => {
    await runDueJobs(t.db);
    expect((await queueHealth(t.db)).oldestDueSeconds).toBe(0);
    const waiting = await t.db.job.create({
      data: { kind: "lag-probe", payload: {}, runAt: new Date(Date.now() - 90_000) },
    });
    const later = await t.db.job.create({
      data: { kind: "lag-probe", payload: {}, runAt: new Date(Date.now() + 3_600_000) },
    });
    const health = await queueHealth(t.db);
    expect(health.oldestDueSeconds).toBeGreaterThanOrEqual(89);
    expect(health.oldestDueSeconds).toBeLessThan(100);
    expect(health.counts).toContainEqual({ kind: "lag-probe", status: "queued", count: 2 });
    await t.db.job.deleteMany({ where: { id: { in: [waiting.id, later.id] } } });
  });

  it("a job claimed by an instance that died is claimed again once its short lock lapses; a live claim is renewed", async () => {
    const job = await t.db.job.create({ data: { kind: "no-such-kind", payload: {}, maxAttempts: 3 } });
    const [mine] = await claim(t.db, 1, ["no-such-kind" as JobKind]);
    expect(mine.id).toBe(job.id);
    const until = (await t.db.job.findUniqueOrThrow({ where: { id: job.id } })).lockedUntil!;
    expect(until.getTime() - Date.now()).toBeLessThanOrEqual(LOCK_SECONDS * 1000 + 2000);
    // While the claim is held (and renewed) nobody else can take the job.
    expect(await renewLock(t.db, mine)).toBe(true);
    expect(await claim(t.db, 1, ["no-such-kind" as JobKind])).toHaveLength(0);
    // The instance dies: no more renewals, the lock lapses, another instance claims it.
    await t.db.job.update({
      where: { id: job.id },
      data: { lockedBy: "dead-host:1", lockedUntil: new Date(Date.now() - 1000) },
    });
    expect(await renewLock(t.db, mine)).toBe(false); // the dead instance's claim is gone
    const [again] = await claim(t.db, 1, ["no-such-kind" as JobKind]);
    expect(again).toMatchObject({ id: job.id, attempts: 2 });
    await t.db.job.delete({ where: { id: job.id } });
  });

  it("a claim of one takes one job, whatever plan the database picks for it", async () => {
    const fresh = await createTestDb(engine); // a statement not planned yet: a kept one keeps its first plan
    try {
      await fresh.db.$executeRawUnsafe(
        `INSERT INTO "Job" (id, kind, payload, "updatedAt") SELECT 'j' || g, 'no-such-kind', '{}', now()
           FROM generate_series(1, 20) g`,
      );
      const claimed = await fresh.db.$transaction(async (tx) => {
        // A plan that runs the due-rows subquery again for each row of "Job", each run skipping the rows the last
        // one took: under load on PGlite the database chose such a plan itself, and 137 of 1,300 claims of one took
        // two or three jobs, the others left "running" with no worker.
        const off = ["hashagg", "hashjoin", "mergejoin", "sort", "indexscan", "bitmapscan", "material"];
        const settings = [...off.map((p) => [`enable_${p}`, "off"]), ["plan_cache_mode", "force_generic_plan"]];
        await tx.$queryRawUnsafe(`SELECT ${settings.map(([k, v]) => `set_config('${k}', '${v}', true)`).join(", ")}`);
        return claim(tx as unknown as typeof fresh.db, 1);
      });
      expect(claimed).toHaveLength(1);
      expect(await fresh.db.job.count({ where: { status: "running" } })).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it("a failing job is retried with backoff, then shown as failed", async () => {
    await t.db.job.create({ data: { kind: "no-such-kind", payload: {}, maxAttempts: 2 } });
    const s = await runDueJobs(t.db);
    expect(s.failed).toBe(1); // unknown kinds cannot succeed: failed at once
    const failed = await t.db.job.findFirstOrThrow({ where: { kind: "no-such-kind" } });
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed.lastError).toMatch(/Unknown job kind/);
    await t.db.job.deleteMany({ where: { kind: "no-such-kind" } });
  });

  it("a job whose payload does not fit its kind fails at once instead of being retried for hours", async () => {
    const job = await t.db.job.create({ data: { kind: "title", payload: { threadId: 42 }, maxAttempts: 5 } });
    const s = await runDueJobs(t.db, { kinds: ["title"] });
    expect(s.failed).toBe(1);
    const failed = await t.db.job.findUniqueOrThrow({ where: { id: job.id } });
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed.lastError).toMatch(/Malformed title payload/);
    await t.db.job.delete({ where: { id: job.id } });
  });

  it("a memory import is all or nothing, and its report counts what was stored", async () => {
    const user = (await t.db.user.create({ data: { email: `imp-${engine}@example.com` } })).id;
    const file = (memories: unknown[]) => ({ format: "mnemo-memories", version: 1, memories });
    // A malformed entry in the middle: nothing is stored.
    await expect(
      importMemories(
        await userContext(t.db, user),
        file([{ text: "First fact" }, { text: 42 }, { text: "Third fact" }]),
      ),
    ).rejects.toThrow();
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
    // The secret guard reduces the second entry to the first: stored once, counted once.
    const r = await importMemories(
      await userContext(t.db, user),
      file([{ text: "Likes tea" }, { text: "Likes tea" }, { text: "fact 12 1795316601756" }, { text: "\u0000" }]),
    );
    expect(r).toMatchObject({ added: 2, skipped: 1 });
    expect(r.rejected.map((x) => x.index)).toEqual([3]);
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(2);
  });
});
