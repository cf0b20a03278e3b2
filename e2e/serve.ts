// Starts what the browser tests need: the mock LLM (port E2E_PORT+1) and the
// production build on a fresh database. With TEST_DATABASE_URL, a new
// PostgreSQL database is created for the run; otherwise a fresh PGlite folder.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { startMockLlm } from "../testing/mock-llm";
import { createPostgresDatabase } from "../testing/databases";
import { openDatabase, resolveDatabaseTarget } from "../lib/db/engine";
import { applyMigrations } from "../lib/db/migrate";

const port = Number(process.env.E2E_PORT ?? 3100);

async function freshDatabaseUrl(): Promise<string | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const url = await createPostgresDatabase(base, "mnemo_e2e");
  // A PostgreSQL deployment migrates with `npm run db:migrate` before starting.
  const db = await openDatabase(resolveDatabaseTarget({ DATABASE_URL: url }));
  await db.withConnection((c) => applyMigrations(c));
  await db.close();
  return url;
}

async function main() {
  const mock = await startMockLlm(port + 1);
  const dataDir = path.resolve(".tmp/e2e-data");
  fs.rmSync(dataDir, { recursive: true, force: true });
  const databaseUrl = await freshDatabaseUrl();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    MNEMO_DATA_DIR: dataDir,
    AUTH_SECRET: "e2e-secret-e2e-secret-e2e-secret-e2e-secret",
    OPENAI_BASE_URL: mock.url,
    OPENAI_API_KEY: "test-key",
    MNEMO_CHAT_MODEL: "mock-chat",
    MNEMO_MEMORY_MODEL: "mock-memory",
    MNEMO_REGISTER_LIMIT_PER_IP: "1000",
    MNEMO_SIGNIN_LIMIT_PER_IP: "1000",
    MNEMO_SIGNIN_LIMIT_PER_EMAIL: "5",
    // The browser tests run with encryption at rest on, so every flow exercises it.
    MNEMO_ENCRYPTION_KEY: "e2e-master-key-e2e-master-key-e2e-master-key",
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  console.log(`[e2e] mock LLM ${mock.url}; database ${databaseUrl ?? dataDir}`);
  const app = spawn(process.execPath, ["scripts/server.mjs", "-p", String(port), "-H", "127.0.0.1"], {
    stdio: "inherit",
    env,
  });
  const stop = async () => {
    app.kill("SIGTERM");
    await mock.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  app.on("exit", (code) => {
    console.error(`[e2e] app exited with ${code}`);
    process.exit(code ?? 1);
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
