// `npm run bench:load`: 100 users chatting at once through the real HTTP
// endpoints of `next start` (sign-in via Auth.js, POST /api/chat streaming) for
// 60 s against the mock model server on loopback, on a fresh embedded database
// (or a fresh PostgreSQL database created from DATABASE_URL). Then checks that
// every sent message was stored, and reports the queued work (learning, titles,
// summaries) still waiting when the load stopped and, on PostgreSQL, how long the
// app took to finish it: a throughput that leaves a growing backlog is not one.
// `--instances N` (PostgreSQL only) runs N app instances on the one database, users spread across them;
// `--api` sends every other user's chats through /v1/chat/completions with the real `openai` client (streaming,
// a personal API key each) instead of the web route. Prints a table, then one JSON line.
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

async function main() {
  buildIfStale();
  const mock = await startMockLlm();
  mock.script({ content: "Thanks, noted. Here is a short answer with a few words to stream back.", times: 0 });
  const { env, count, jobs } = await prepareDatabase();
  if (INSTANCES > 1 && !env.DATABASE_URL)
    throw new Error("--instances needs PostgreSQL (DATABASE_URL): the embedded database has one owner process.");
  // BENCH_APP_NODE_ARGS: extra node flags for the app, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_APP_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const apps = bases.map((_, n) =>
    spawn(
      process.execPath,
      [...nodeArgs, "node_modules/next/dist/bin/next", "start", "-p", String(PORT + n), "-H", "127.0.0.1"],
      {
        env: {
          ...process.env,
          ...env,
          NODE_ENV: "production",
          AUTH_SECRET: "load-secret-load-secret-load-secret-load-00",
          OPENAI_BASE_URL: mock.url,
          OPENAI_API_KEY: "k",
          MNEMO_CHAT_MODEL: "mock-chat",
          MNEMO_SIGNIN_LIMIT_PER_IP: "100000",
          MNEMO_REGISTER_LIMIT_PER_IP: "100000",
        },
        stdio: ["ignore", "ignore", "inherit"],
      },
    ),
  );
  try {
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
    const cookies: string[] = [];
    for (let i = 0; i < USERS; i++) cookies.push(await signIn(i));

    let sent = 0;
    let okAnswers = 0;
    let errors = 0;
    const chats = new Set<string>();
    const ttft: number[] = [];
    const apiTtft: number[] = [];
    let apiAnswers = 0;
    const errorKinds = new Map<string, number>();
    const deadline = Date.now() + SECONDS * 1000;
    const t0 = Date.now();

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
            const content = `api user ${u} turn ${turn}: how are you today?`;
            history.push({ role: "user", content });
            const start = performance.now();
            sent++;
            try {
              const stream = await client.chat.completions.create({ model: "x", messages: history, stream: true });
              let text = "";
              for await (const chunk of stream) {
                const d = chunk.choices[0]?.delta.content;
                if (d && !text) apiTtft.push(performance.now() - start);
                text += d ?? "";
              }
              if (!text) throw new Error("empty API answer");
              history.push({ role: "assistant", content: text });
              okAnswers++;
              apiAnswers++;
            } catch (e) {
              errors++;
              history.pop();
              const k = `api: ${(e as Error).message.slice(0, 80)}`;
              errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1);
            }
            turn++;
          }
          return;
        }
        while (Date.now() < deadline) {
          if (turn % 5 === 0) threadId = undefined; // a new chat every five turns
          const start = performance.now();
          sent++;
          try {
            const res = await fetch(`${at}/api/chat`, {
              method: "POST",
              headers: { "content-type": "application/json", cookie },
              body: JSON.stringify({ kind: "send", threadId, content: `user ${u} turn ${turn}: how are you today?` }),
            });
            if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
            const text = await (async () => {
              let all = "";
              let first = true;
              // Node's web streams are async iterable; TypeScript's DOM types do not say so.
              const chunks = res.body!.pipeThrough(new TextDecoderStream()) as unknown as AsyncIterable<string>;
              for await (const chunk of chunks) {
                if (first && chunk.includes('"delta"')) {
                  ttft.push(performance.now() - start);
                  first = false;
                }
                all += chunk;
              }
              return all;
            })();
            const events = text
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l));
            threadId = events[0]?.threadId;
            if (threadId) chats.add(threadId);
            if (events.at(-1)?.type !== "done")
              throw new Error(`answer ended with ${events.at(-1)?.type}: ${events.at(-1)?.message ?? ""}`);
            okAnswers++;
          } catch (e) {
            errors++;
            const k = (e as Error).message.slice(0, 80);
            errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1);
          }
          turn++;
        }
      }),
    );
    const elapsed = (Date.now() - t0) / 1000;
    // PostgreSQL: the backlog when the load stopped, then how long the idle app takes to finish it (at most 5 min).
    let backlog: number | null = null;
    let drainSeconds: number | null = null;
    if (env.DATABASE_URL) {
      backlog = (await jobs()).pending;
      const d0 = Date.now();
      while ((await jobs()).pending > 0 && Date.now() - d0 < 300_000) await new Promise((r) => setTimeout(r, 500));
      drainSeconds = round((Date.now() - d0) / 1000, 1);
    }
    for (const a of apps) {
      a.kill("SIGTERM");
      await new Promise((r) => a.once("exit", r));
    }
    const stored = await count();
    const jobCounts = await jobs();
    console.log(
      `Load: ${USERS} users for ${SECONDS} s through ${INSTANCES} next start instance(s) (${env.DATABASE_URL ? "PostgreSQL" : "PGlite"})${API ? ", half of them through /v1/chat/completions" : ""}, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
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
    console.log(
      JSON.stringify({
        chats: chats.size,
        messages_sent: sent,
        messages_stored: stored.user,
        errors,
        ttft_p95_ms: round(percentile(ttft, 95)),
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
    for (const a of apps) if (a.exitCode === null) a.kill("SIGTERM");
    await mock.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
