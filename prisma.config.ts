// Prisma CLI configuration (generate, migrate diff, migrate status on PostgreSQL).
// The WebAssembly schema engine ("js") talks through the same driver adapter the
// app uses. Apply migrations with `npm run db:migrate` (lib/db/migrate.ts), not
// `prisma migrate deploy`, which never exits on PGlite. Run the CLI through
// scripts/prisma.mjs, which sets the environment it needs offline.
import { defineConfig } from "prisma/config";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { openDatabase, resolveDatabaseTarget } from "./lib/db/engine";

// Opens the database only when the CLI really connects: `generate` and
// `migrate diff` between schema files never do, so they exit promptly instead
// of being held open by an idle PGlite.
function lazyFactory(): SqlMigrationAwareDriverAdapterFactory {
  let real: Promise<SqlMigrationAwareDriverAdapterFactory> | undefined;
  // Commands that need no real database (migrate diff between schema files)
  // get a throwaway in-memory PGlite, which does not keep the process alive.
  const target = process.env.MNEMO_PRISMA_NO_DB
    ? ({ kind: "pglite", dataDir: "", pgliteDir: null } as const)
    : resolveDatabaseTarget();
  const get = () => (real ??= openDatabase(target).then((d) => d.factory));
  return {
    provider: "postgres",
    adapterName: resolveDatabaseTarget().kind === "postgres" ? "@prisma/adapter-pg" : "pglite-prisma-adapter",
    connect: async () => (await get()).connect(),
    connectToShadowDb: async () => (await get()).connectToShadowDb(),
  } as SqlMigrationAwareDriverAdapterFactory;
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  async adapter() {
    return lazyFactory();
  },
});
