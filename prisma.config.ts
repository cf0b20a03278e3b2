// Prisma CLI configuration (generate, migrate diff, migrate status on PostgreSQL).
// The WebAssembly schema engine ("js") talks through the same driver adapter the
// app uses. Apply migrations with `npm run db:migrate` (lib/db/migrate.ts), not
// `prisma migrate deploy`, which never exits on PGlite. Run the CLI through
// scripts/prisma.mjs, which sets the environment it needs offline.
import { defineConfig } from "prisma/config";
import { openDatabase, resolveDatabaseTarget } from "./lib/db/engine";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  async adapter() {
    return (await openDatabase(resolveDatabaseTarget())).factory;
  },
});
