// `npm run bench:load`: 100 users chatting at once through the real HTTP
// endpoints of `next start` (sign-in via Auth.js, POST /api/chat streaming) for
// 60 s against the mock model server on loopback, on a fresh embedded database
// (or a fresh PostgreSQL database created from DATABASE_URL). Then checks that
// every sent message was stored, and reports the queued work (learning, titles,
// summaries) still waiting when the load stopped and, on PostgreSQL, how long the
// app took to finish it: a throughput that leaves a growing backlog is not one.
// `--instances N` (PostgreSQL only) runs N app instances on the one database, users spread across them;
// `--api` sends every other user's chats through /v1/chat/completions with the real `openai` client (streaming,
// a personal API key each) instead of the web route. `--rate R` sends R turns a second whatever the answers (open
// loop) instead; `--find-capacity` raises the rate step by step until first-token p95 passes 1 s. Each run prints the
// app's CPU per turn and how many questions went on by words only (the question's vector late). Prints a table, then
// one JSON line.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { signInOverHttp } from "../../testing/app-process";
import crypto from "node:crypto";
import OpenAI from "openai";
import { startMockLlm } from "../../testing/mock-llm";
import { createPostgresDatabase } from "../../testing/databases";
import { openDatabase, resolveDatabaseTarget } from "../../lib/db/engine";
import { applyMigrations } from "../../lib/db/migrate";
import { hashPassword } from "../../lib/auth/password";
import { buildIfStale } from "../build-state";
import { percentile, round, table } from "./stats";

const USERS = Number(process.env.BENCH_USERS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const PORT = Number(process.env.BENCH_PORT ?? 3300);
/** Open loop: each turn's second (from the start, warm-up included) and first token, printed with BENCH_TIMELINE=1. */
const timeline: Array<{ second: number; ttft: number; newChat: boolean }> = [];
/** Open loop: seconds at the rate before measuring (BENCH_WARMUP). */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 5);
const argValue = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const INSTANCES = Math.max(1, Number(argValue("--instances") ?? process.env.BENCH_INSTANCES ?? 1) || 1);
const API = process.argv.includes("--api") || process.env.BENCH_API === "1";
const bases = Array.from({ length: INSTANCES }, (_, i) => `http://127.0.0.1:${PORT + i}`);
const base = bases[0];
/** The API key of load user i (stored hashed, as the app does). */
const apiKeyOf = (i: number) => `mnemo_load${i}_${"k".repeat(20)}`;
const usesApi = (i: number) => API && i % 2 === 1;
const PASSWORD = "load-test-password";

type Jobs = { pending: number; done: number; failed: number };
type Prepared = {
  env: Record<string, string>;
  count: () => Promise<{ user: number; assistant: number }>;
  /** Job counts; on PGlite only once the app has stopped (one process owns the embedded database). */
  jobs: () => Promise<Jobs>;
};

async function prepareDatabase(): Promise<Prepared> {
  let target;
  const env: Record<string, string> = {};
  if (process.env.DATABASE_URL) {
    env.DATABASE_URL = await createPostgresDatabase(process.env.DATABASE_URL, "mnemo_load");
    target = resolveDatabaseTarget({ DATABASE_URL: env.DATABASE_URL });
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-load-"));
    env.MNEMO_DATA_DIR = dir;
    target = resolveDatabaseTarget({ MNEMO_DATA_DIR: dir });
  }
  const db = await openDatabase(target);
  const hash = await hashPassword(PASSWORD); // one hash for all: the bench measures chat, not scrypt
  await db.withConnection(async (c) => {
    await applyMigrations(c);
    for (let i = 0; i < USERS; i++) {
      await c.query(
        `INSERT INTO "User" (id, email, "passwordHash", role, "updatedAt") VALUES ($1, $2, $3, $4, now())`,
        [`load-user-${i}`, `load${i}@example.com`, hash, i === 0 ? "ADMIN" : "USER"],
      );
      if (usesApi(i))
        await c.query(
          `INSERT INTO "ApiKey" (id, "userId", name, prefix, hash, scopes) VALUES ($1, $2, 'load', 'mnemo_', $3, ARRAY['chat'])`,
          [`load-key-${i}`, `load-user-${i}`, crypto.createHash("sha256").update(apiKeyOf(i)).digest("hex")],
        );
    }
  });
  await db.close();
  return {
    env,
    count: async () => {
      const d = await openDatabase(target);
      const rows = await d.withConnection((c) =>
        c.query<{ role: string; n: string }>(
          `SELECT role::text AS role, count(*)::text AS n FROM "Item" GROUP BY role`,
        ),
      );
      await d.close();
      const get = (r: string) => Number(rows.find((x) => x.role === r)?.n ?? 0);
      return { user: get("user"), assistant: get("assistant") };
    },
    jobs: async () => {
      const d = await openDatabase(target);
      const rows = await d.withConnection((c) =>
        c.query<{ status: string; n: string }>(`SELECT status, count(*)::text AS n FROM "Job" GROUP BY status`),
      );
      await d.close();
      const get = (...st: string[]) => rows.filter((x) => st.includes(x.status)).reduce((a, x) => a + Number(x.n), 0);
      return { pending: get("queued", "running"), done: get("done"), failed: get("failed") };
    },
  };
}

const signIn = (i: number) => signInOverHttp(base, `load${i}@example.com`, PASSWORD);

/** One chat turn through the web route; resolves with the thread and the time to the first streamed words. */
async function webTurn(at: string, cookie: string, threadId: string | undefined, content: string) {
  const start = performance.now();
  let ttft: number | null = null;
  const res = await fetch(`${at}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ kind: "send", threadId, content }),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
  let all = "";
  // Node's web streams are async iterable; TypeScript's DOM types do not say so.
  const chunks = res.body.pipeThrough(new TextDecoderStream()) as unknown as AsyncIterable<string>;
  for await (const chunk of chunks) {
    if (ttft === null && chunk.includes('"delta"')) ttft = performance.now() - start;
    all += chunk;
  }
  const events = all
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const last = events.at(-1);
  if (last?.type !== "done") throw new Error(`answer ended with ${last?.type}: ${last?.message ?? ""}`);
  return { threadId: events[0]?.threadId as string | undefined, ttft: ttft ?? performance.now() - start };
}

/** One turn through /v1/chat/completions with the real `openai` client (streaming). */
async function apiTurn(client: OpenAI, history: OpenAI.Chat.Completions.ChatCompletionMessageParam[]) {
  const start = performance.now();
  let ttft: number | null = null;
  const stream = await client.chat.completions.create({ model: "mnemo", messages: history, stream: true });
  let text = "";
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta.content;
    if (d && ttft === null) ttft = performance.now() - start;
    text += d ?? "";
  }
  if (!text) throw new Error("empty API answer");
  return { text, ttft: ttft ?? performance.now() - start };
}

type App = {
  /** Starts counting the app's CPU from now (after the sign-ins, whose password hashing is not a turn's cost). */
  mark: () => void;
  stop: () => Promise<{ cpuSeconds: number; byWords: number | null; asked: number | null }>;
};

/** Starts the app instances on the prepared database and waits until each answers /api/health. */
async function startApps(env: Record<string, string>, mockUrl: string): Promise<App> {
  // BENCH_APP_NODE_ARGS: extra node flags for the app, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_APP_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const logs: string[] = [];
  const apps = bases.map((_, n) => {
    const child = spawn(
      process.execPath,
      [...nodeArgs, "node_modules/next/dist/bin/next", "start", "-p", String(PORT + n), "-H", "127.0.0.1"],
      {
        env: {
          ...process.env,
          ...env,
          NODE_ENV: "production",
          AUTH_SECRET: "load-secret-load-secret-load-secret-load-00",
          OPENAI_BASE_URL: mockUrl,
          OPENAI_API_KEY: "k",
          MNEMO_CHAT_MODEL: "mock-chat",
          MNEMO_SIGNIN_LIMIT_PER_IP: "100000",
          MNEMO_REGISTER_LIMIT_PER_IP: "100000",
        },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    child.stdout!.setEncoding("utf8").on("data", (d: string) => logs.push(d));
    return child;
  });
  for (const b of bases)
    for (let i = 0; i < 120; i++) {
      if (
        await fetch(`${b}/api/health`)
          .then((r) => r.ok)
          .catch(() => false)
      )
        break;
      await new Promise((r) => setTimeout(r, 500));
    }
  let cpu0 = apps.map((a) => processTreeCpu(a.pid!));
  return {
    mark: () => (cpu0 = apps.map((a) => processTreeCpu(a.pid!))),
    stop: async () => {
      const cpu = apps.reduce((sum, a, i) => sum + processTreeCpu(a.pid!) - cpu0[i], 0);
      for (const a of apps) {
        if (a.exitCode !== null) continue;
        a.kill("SIGTERM");
        await new Promise((r) => a.once("exit", r));
      }
      // Each instance logs at exit how many questions went on by words only (lib/background.ts).
      const tallies = [...logs.join("").matchAll(/embeddings: (\d+) of (\d+) questions by words only since start/g)];
      const sum = (k: 1 | 2) => (tallies.length ? tallies.reduce((s, m) => s + Number(m[k]), 0) : null);
      return { cpuSeconds: cpu, byWords: sum(1), asked: sum(2) };
    },
  };
}

/** CPU seconds (user + system) a process and its descendants have used, from /proc (Linux). */
function processTreeCpu(pid: number): number {
  const tick = 100; // USER_HZ on Linux
  const statOf = (p: number) => {
    try {
      const f = fs.readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
      return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / tick };
    } catch {
      return null;
    }
  };
  const all = fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((d) => ({ pid: Number(d), s: statOf(Number(d)) }));
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) if (p.s && !tree.has(p.pid) && tree.has(p.s.ppid)) grew = tree.add(p.pid) !== null;
  }
  return all.filter((p) => tree.has(p.pid)).reduce((sum, p) => sum + (p.s?.cpu ?? 0), 0);
}

type Tally = { sent: number; ok: number; errors: number; ttft: number[]; apiTtft: number[]; apiOk: number };
const newTally = (): Tally => ({ sent: 0, ok: 0, errors: 0, ttft: [], apiTtft: [], apiOk: 0 });
const errorKinds = new Map<string, number>();
const countError = (e: unknown, prefix = "") => {
  const k = `${prefix}${(e as Error).message.slice(0, 80)}`;
  errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1);
};

/** Closed loop: each user sends as soon as the last answer is in (a new chat every five turns), until `deadline`. */
async function closedLoop(cookies: string[], deadline: number, chats: Set<string>, tally: Tally) {
  await Promise.all(
    cookies.map(async (cookie, u) => {
      let threadId: string | undefined;
      let turn = 0;
      const at = bases[u % bases.length]; // users spread over the instances
      if (usesApi(u)) {
        const client = new OpenAI({ baseURL: `${at}/v1`, apiKey: apiKeyOf(u), maxRetries: 0 });
        let history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];
        while (Date.now() < deadline) {
          if (turn % 5 === 0) history = []; // a new client conversation every five turns
          history.push({ role: "user", content: `api user ${u} turn ${turn}: how are you today?` });
          tally.sent++;
          try {
            const { text, ttft } = await apiTurn(client, history);
            tally.apiTtft.push(ttft);
            history.push({ role: "assistant", content: text });
            tally.ok++;
            tally.apiOk++;
          } catch (e) {
            tally.errors++;
            history.pop();
            countError(e, "api: ");
          }
          turn++;
        }
        return;
      }
      while (Date.now() < deadline) {
        if (turn % 5 === 0) threadId = undefined; // a new chat every five turns
        tally.sent++;
        try {
          const r = await webTurn(at, cookie, threadId, `user ${u} turn ${turn}: how are you today?`);
          threadId = r.threadId;
          if (threadId) chats.add(threadId);
          tally.ttft.push(r.ttft);
          tally.ok++;
        } catch (e) {
          tally.errors++;
          countError(e);
        }
        turn++;
      }
    }),
  );
}

/**
 * Before the rate starts, each instance answers a new chat and a turn in it, one at a time: a cold server compiles
 * its routes on first use, and three of them doing it at once on 2 cores took 0.8-2.5 s a turn for the first seconds,
 * longer than the warm-up. Not counted; the instance's users are told apart by index (user n goes to instance n).
 */
async function primeInstances(cookies: string[]) {
  for (const [n, base] of bases.entries()) {
    const first = await webTurn(base, cookies[n], undefined, `user ${n} priming: hello`);
    await webTurn(base, cookies[n], first.threadId, `user ${n} priming: how are you today?`);
  }
}

/**
 * Open loop: `rate` turns a second for `seconds`, whatever the answers, spread over the users in turn (a user whose
 * last turn is still running starts a new chat; else every fifth turn does). First-token time is then a turn's
 * latency at that rate, not queueing behind a fixed number of users.
 */
async function openLoop(
  cookies: string[],
  rate: number,
  seconds: number,
  chats: Set<string>,
  measured: Tally,
  onMeasure: () => void,
) {
  await primeInstances(cookies);
  const users = cookies.map(() => ({ threadId: undefined as string | undefined, busy: false, turn: 0 }));
  const running: Promise<void>[] = [];
  // The first WARMUP seconds at the rate are not counted: a fresh server compiles its routes and its JIT warms.
  const warmup = Math.round(rate * WARMUP_SECONDS);
  const t0 = performance.now();
  for (let i = 0; i < warmup + rate * seconds; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (i === warmup) onMeasure();
    const tally = i < warmup ? newTally() : measured;
    const u = i % cookies.length;
    const me = users[u];
    const threadId = me.busy || me.turn % 5 === 0 ? undefined : me.threadId;
    me.busy = true;
    me.turn++;
    tally.sent++;
    running.push(
      webTurn(bases[u % bases.length], cookies[u], threadId, `user ${u} turn ${me.turn}: how are you today?`)
        .then((r) => {
          me.threadId = r.threadId;
          if (r.threadId) chats.add(r.threadId);
          tally.ttft.push(r.ttft);
          timeline.push({ second: Math.floor((due - t0) / 1000), ttft: r.ttft, newChat: !threadId });
          tally.ok++;
        })
        .catch((e) => {
          tally.errors++;
          countError(e);
        })
        .finally(() => (me.busy = false)),
    );
  }
  await Promise.all(running);
}

/**
 * First token by the second each turn was sent (warm-up included): whether a p95 comes from a steady state or from a
 * transient (a fresh server, a backlog draining, a periodic job).
 */
function printTimeline() {
  const seconds = [...new Set(timeline.map((t) => t.second))].sort((a, b) => a - b);
  console.log(`Timeline (the first ${WARMUP_SECONDS} s are the warm-up, not counted above):`);
  console.log(
    table(
      seconds.map((second) => {
        const at = timeline.filter((t) => t.second === second);
        const ms = at.map((t) => t.ttft);
        return {
          second,
          turns: at.length,
          new_chats: at.filter((t) => t.newChat).length,
          ttft_p50_ms: round(percentile(ms, 50)),
          ttft_max_ms: round(Math.max(...ms)),
        };
      }),
    ),
  );
}

async function main() {
  buildIfStale();
  const mock = await startMockLlm();
  mock.script({ content: "Thanks, noted. Here is a short answer with a few words to stream back.", times: 0 });
  const rate = Number(argValue("--rate") ?? 0);
  if (process.argv.includes("--find-capacity")) return findCapacity(mock.url).finally(() => mock.close());
  const { env, count, jobs } = await prepareDatabase();
  if (INSTANCES > 1 && !env.DATABASE_URL)
    throw new Error("--instances needs PostgreSQL (DATABASE_URL): the embedded database has one owner process.");
  const app = await startApps(env, mock.url);
  let stopped: Awaited<ReturnType<App["stop"]>> | null = null;
  try {
    const cookies: string[] = [];
    for (let i = 0; i < USERS; i++) cookies.push(await signIn(i));
    app.mark();

    const chats = new Set<string>();
    const tally = newTally();
    const t0 = Date.now();
    if (rate > 0) await openLoop(cookies, rate, SECONDS, chats, tally, app.mark);
    else await closedLoop(cookies, Date.now() + SECONDS * 1000, chats, tally);
    // Open loop: the measured part (after the warm-up), which ends when its last answer does.
    const elapsed = rate > 0 ? Math.max(SECONDS, (Date.now() - t0) / 1000 - WARMUP_SECONDS) : (Date.now() - t0) / 1000;
    const { sent, ok: okAnswers, errors, ttft, apiTtft, apiOk: apiAnswers } = tally;
    // PostgreSQL: the backlog when the load stopped, then how long the idle app takes to finish it (at most 5 min).
    let backlog: number | null = null;
    let drainSeconds: number | null = null;
    if (env.DATABASE_URL) {
      backlog = (await jobs()).pending;
      const d0 = Date.now();
      while ((await jobs()).pending > 0 && Date.now() - d0 < 300_000) await new Promise((r) => setTimeout(r, 500));
      drainSeconds = round((Date.now() - d0) / 1000, 1);
    }
    stopped = await app.stop();
    const stored = await count();
    const jobCounts = await jobs();
    console.log(
      `Load: ${USERS} users for ${SECONDS} s${rate > 0 ? ` at ${rate} turns/s (open loop)` : " (closed loop)"} through ${INSTANCES} next start instance(s) (${env.DATABASE_URL ? "PostgreSQL" : "PGlite"})${API ? ", half of them through /v1/chat/completions" : ""}, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
    );
    console.log(
      table([
        {
          users: USERS,
          instances: INSTANCES,
          seconds: round(elapsed, 1),
          chats: chats.size,
          sent,
          answered: okAnswers,
          "turns/s": round(okAnswers / elapsed, 1),
          user_msgs_stored: stored.user,
          errors,
          ttft_p50_ms: round(percentile(ttft, 50)),
          ttft_p95_ms: round(percentile(ttft, 95)),
          ttft_p99_ms: round(percentile(ttft, 99)),
          cpu_ms_per_turn: round((stopped.cpuSeconds * 1000) / Math.max(1, okAnswers), 1),
          by_words_only: stopped.byWords,
          ...(API
            ? {
                api_answered: apiAnswers,
                api_ttft_p50_ms: round(percentile(apiTtft, 50)),
                api_ttft_p95_ms: round(percentile(apiTtft, 95)),
              }
            : {}),
          jobs_pending_at_stop: backlog,
          drain_s: drainSeconds,
          // Answers per second counting the time to finish their queued work: what the app can keep up with.
          "sustained turns/s": drainSeconds === null ? null : round(okAnswers / (elapsed + drainSeconds), 1),
          jobs_done: jobCounts.done,
          jobs_left: jobCounts.pending,
          jobs_failed: jobCounts.failed,
        },
      ]),
    );
    for (const [k, n] of errorKinds) console.log(`error x${n}: ${k}`);
    if (process.env.BENCH_TIMELINE && timeline.length) printTimeline();
    console.log(
      JSON.stringify({
        chats: chats.size,
        rate: rate > 0 ? rate : null,
        messages_sent: sent,
        messages_stored: stored.user,
        errors,
        ttft_p50_ms: round(percentile(ttft, 50)),
        ttft_p95_ms: round(percentile(ttft, 95)),
        ttft_p99_ms: round(percentile(ttft, 99)),
        cpu_ms_per_turn: round((stopped.cpuSeconds * 1000) / Math.max(1, okAnswers), 1),
        questions_by_words_only: stopped.byWords,
        instances: INSTANCES,
        api_answered: API ? apiAnswers : null,
        api_ttft_p95_ms: API ? round(percentile(apiTtft, 95)) : null,
        lost_messages: Math.max(0, okAnswers - stored.user),
        jobs_pending_at_stop: backlog,
        drain_s: drainSeconds,
        sustained_turns_per_s: drainSeconds === null ? null : round(okAnswers / (elapsed + drainSeconds), 1),
        jobs_done: jobCounts.done,
        jobs_left: jobCounts.pending,
        jobs_failed: jobCounts.failed,
      }),
    );
  } finally {
    if (!stopped) await app.stop().catch(() => undefined);
    await mock.close();
  }
}

/**
 * `--find-capacity`: open-loop steps of rising rate (each on a fresh app, BENCH_SECONDS each, 30 s unless set) until
 * first-token p95 passes 1 s or a turn fails; the capacity is the last rate that held. Then half that rate once more,
 * the figure a deployment sized with headroom would see.
 */
async function findCapacity(mockUrl: string) {
  const seconds = Number(process.env.BENCH_SECONDS ?? 30);
  const steps: Array<Record<string, number | null>> = [];
  const step = async (rate: number) => {
    const { env } = await prepareDatabase();
    const app = await startApps(env, mockUrl);
    const cookies: string[] = [];
    const tally = newTally();
    try {
      for (let i = 0; i < USERS; i++) cookies.push(await signIn(i));
      await openLoop(cookies, rate, seconds, new Set(), tally, app.mark);
    } finally {
      const s = await app.stop();
      const row = {
        rate,
        sent: tally.sent,
        errors: tally.errors,
        ttft_p50_ms: round(percentile(tally.ttft, 50)),
        ttft_p95_ms: round(percentile(tally.ttft, 95)),
        ttft_p99_ms: round(percentile(tally.ttft, 99)),
        cpu_ms_per_turn: round((s.cpuSeconds * 1000) / Math.max(1, tally.ok), 1),
        by_words_only: s.byWords,
      };
      steps.push(row);
      console.error(JSON.stringify(row));
    }
    return steps.at(-1)!;
  };
  const holds = (r: Record<string, number | null>) => r.errors === 0 && (r.ttft_p95_ms ?? Infinity) <= 1000;
  let rate = Number(argValue("--from") ?? 4);
  let capacity = 0;
  // Doubling until a step fails, then halving the gap between the last rate that held and the first that did not.
  let failed = Infinity;
  while (rate < failed && steps.length < 12) {
    if (holds(await step(rate))) capacity = rate;
    else failed = rate;
    const next = failed === Infinity ? rate * 2 : Math.round((capacity + failed) / 2);
    if (next <= capacity || next >= failed || failed - capacity <= Math.max(1, capacity * 0.1)) break;
    rate = next;
  }
  const half = capacity ? await step(Math.max(1, Math.round(capacity / 2))) : null;
  console.log(
    `Capacity: open-loop steps of ${seconds} s, ${USERS} users, ${INSTANCES} instance(s) (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}), ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
  );
  console.log(table(steps));
  for (const [k, n] of errorKinds) console.log(`error x${n}: ${k}`);
  console.log(
    JSON.stringify({
      capacity_turns_per_s: capacity,
      half_rate: half?.rate ?? null,
      half_rate_ttft_p95_ms: half?.ttft_p95_ms ?? null,
      half_rate_by_words_only: half?.by_words_only ?? null,
      steps,
    }),
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
