#!/usr/bin/env node
// Runs the Prisma CLI offline. The native engines are never used (engineType
// "client" + engine "js"), but the CLI tries to download them at start unless
// these point somewhere; the schema's url only has to look like PostgreSQL.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
export const prismaEnv = {
  PRISMA_SCHEMA_ENGINE_BINARY: "/nonexistent/prisma-schema-engine",
  PRISMA_QUERY_ENGINE_LIBRARY: "/nonexistent/prisma-query-engine",
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
  PRISMA_SCHEMA_URL: "postgresql://unused@localhost/unused",
};

export function runPrisma(args, extraEnv = {}) {
  const env = { ...process.env, ...prismaEnv, ...extraEnv };
  // PGlite has a single connection: the migration advisory lock would wait forever.
  if (!env.DATABASE_URL) env.PRISMA_SCHEMA_DISABLE_ADVISORY_LOCK = "1";
  // `migrate diff` between schema files and `generate` need no real database.
  if (args[0] === "generate" || (args[0] === "migrate" && args[1] === "diff")) env.MNEMO_PRISMA_NO_DB = "1";
  const cli = require.resolve("prisma/build/index.js");
  const r = spawnSync(process.execPath, [cli, ...args], { stdio: "inherit", env });
  return r.status ?? 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(runPrisma(process.argv.slice(2)));
}
