// `npm run check:privacy`: the deletion, export, encryption and audit checks
// (testing/privacy-checks.ts) on a fresh embedded database, and on a fresh
// scratch database next to DATABASE_URL when it is set (never on your data).
// The last line is one JSON object; every count but tables_checked must be 0.
import { createPostgresDatabase, createTestDb } from "@/testing/databases";
import { openDatabase } from "@/lib/db/engine";
import { applyMigrations } from "@/lib/db/migrate";
import { newPrismaClient } from "@/lib/db/prisma";
import { runPrivacyChecks, type PrivacyReport } from "@/testing/privacy-checks";

async function onPostgres(baseUrl: string): Promise<PrivacyReport> {
  const url = await createPostgresDatabase(baseUrl, "mnemo_privacy");
  const database = await openDatabase({ kind: "postgres", url });
  try {
    await database.withConnection((c) => applyMigrations(c));
    const db = newPrismaClient(database.factory, database.pool);
    try {
      return await runPrivacyChecks(db);
    } finally {
      await db.$disconnect();
    }
  } finally {
    await database.close();
  }
}

async function main() {
  const reports: Array<[string, PrivacyReport]> = [];
  const lite = await createTestDb("pglite");
  try {
    reports.push(["pglite", await runPrivacyChecks(lite.db)]);
  } finally {
    await lite.close();
  }
  if (process.env.DATABASE_URL) reports.push(["postgres", await onPostgres(process.env.DATABASE_URL)]);
  const sum = (k: keyof PrivacyReport) => reports.reduce((n, [, r]) => n + (r[k] as number), 0);
  for (const [engine, r] of reports) {
    console.log(
      `${engine}: ${r.tables_checked} tables; rows left after delete ${r.rows_left_after_delete}; export missing ${r.export_missing_rows}; plaintext hits ${r.plaintext_hits}; unaudited admin reads ${r.unaudited_admin_reads}; other user's rows changed ${r.other_user_rows_changed}; shredded rows readable ${r.shredded_still_readable}; unreadable after rotation ${r.rotation_unreadable}`,
    );
    for (const d of r.details) console.log(`  ${engine}: ${d}`);
  }
  const result = {
    engines: reports.map(([e]) => e),
    tables_checked: Math.min(...reports.map(([, r]) => r.tables_checked)),
    rows_left_after_delete: sum("rows_left_after_delete") + sum("other_user_rows_changed"),
    export_missing_rows: sum("export_missing_rows"),
    plaintext_hits: sum("plaintext_hits") + sum("shredded_still_readable"),
    unaudited_admin_reads: sum("unaudited_admin_reads"),
    rotation_unreadable: sum("rotation_unreadable"),
    unmapped_tables: [...new Set(reports.flatMap(([, r]) => r.unmapped_tables))],
  };
  const failed =
    result.rows_left_after_delete +
    result.export_missing_rows +
    result.plaintext_hits +
    result.unaudited_admin_reads +
    result.rotation_unreadable +
    result.unmapped_tables.length +
    reports.reduce((n, [, r]) => n + r.details.length, 0);
  if (failed) process.exitCode = 1;
  console.log(JSON.stringify(result));
}

main()
  .catch((e) => {
    console.error(`check:privacy failed: ${(e as Error).stack ?? e}`);
    process.exitCode = 1;
  })
  .finally(() => process.exit());
