// `npm run db:functions -- <migration_name>`: writes prisma/migrations/<timestamp>_<migration_name>/migration.sql
// with every database function whose source (prisma/sql/functions) differs from what the migrations make, and a
// DROP for any signature no source makes any more. Without a name it only reports.
import fs from "node:fs";
import path from "node:path";
import { driftMigration, functionDrift } from "../lib/db/sql-functions";

const name = process.argv[2];
if (name && !/^[a-z0-9_]+$/.test(name)) {
  console.error("db:functions: the migration name is lowercase letters, digits and underscores.");
  process.exit(2);
}
const drift = await functionDrift();
const sql = driftMigration(drift);
if (!sql) {
  console.log("db:functions: the migrations and prisma/sql/functions agree; nothing to write.");
  process.exit(0);
}
console.log(
  `db:functions: changed ${drift.changed.map((s) => s.name).join(", ") || "none"}; stale ${drift.stale.join(", ") || "none"}`,
);
if (!name) {
  console.log("Run again with a migration name to write it: npm run db:functions -- <name>");
  process.exit(1);
}
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = path.join("prisma", "migrations", `${stamp}_${name}`);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, "migration.sql"), sql);
console.log(`db:functions: wrote ${dir}/migration.sql`);
