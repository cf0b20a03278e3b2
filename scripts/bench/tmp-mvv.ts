import fs from "node:fs";
import { createTestDb } from "@/testing/databases";
const engine = (process.env.ENGINE ?? "pglite") as "pglite" | "postgres";
const t = await createTestDb(engine);
const user = await t.db.user.create({ data: { email: "mvv@example.com" } });
const vec = "{" + Array.from({ length: 512 }, (_, i) => Math.sin(i)).join(",") + "}";
for (let i = 0; i < Number(process.env.N ?? 1000); i++)
  await t.db.$executeRawUnsafe(
    `INSERT INTO "Memory" (id, "userId", text, source, kind, tokens, "updatedAt", embedding, "embeddingModel")
     VALUES ($1, $2, $3, 'inferred', 'fact', 5, now(), $4::real[], 'm')`,
    `m${i}`, user.id, `memory number ${i}`, vec);
await t.db.$executeRawUnsafe(fs.readFileSync("/tmp/old_versions.sql", "utf8"));
await t.db.$executeRawUnsafe(`ANALYZE "Memory"`);
const time = async (sql: string, known: string | null) => {
  const ms: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    await t.db.$queryRawUnsafe(sql, user.id, "m", known);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[150].toFixed(3), p95: ms[285].toFixed(3) };
};
for (let round = 0; round < 3; round++) {
  const oldKnown = ((await t.db.$queryRawUnsafe(`SELECT * FROM old_versions($1, $2, NULL)`, user.id, "m")) as any[])[0].version;
  const newKnown = ((await t.db.$queryRawUnsafe(`SELECT * FROM mnemo_memory_vector_versions($1, $2, NULL)`, user.id, "m")) as any[])[0].version;
  console.log(engine, "digest", { old: await time(`SELECT * FROM old_versions($1, $2, $3)`, oldKnown), new: await time(`SELECT * FROM mnemo_memory_vector_versions($1, $2, $3)`, newKnown), empty: await time(`SELECT $1::text, $2::text, $3::text`, null) });
}
await t.close();
