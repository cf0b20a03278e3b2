import { benchEngines } from "./env";
const { createTestDb } = await import("../../testing/databases");
const { appendItems } = await import("../../lib/memory/session");
const ANSWER = `
  JOIN LATERAL (
    WITH RECURSIVE d AS (
      SELECT c.id, c.role, c.status, c.content, c.position, 1 AS depth FROM "Item" c WHERE c."parentId" = u.id
      UNION ALL
      SELECT c.id, c.role, c.status, c.content, c.position, d.depth + 1 FROM "Item" c JOIN d ON c."parentId" = d.id
      WHERE d.role <> 'user' AND d.depth < 4
    )
    SELECT d.content FROM d WHERE d.role = 'assistant' AND d.status = 'complete' ORDER BY d.depth, d.position LIMIT 1
  ) a ON true`;
const OLD = `SELECT t.id AS "threadId", u.id AS "userItemId", u.position, u.content AS question, a.content AS answer, t."importLearnedThrough" AS learned
       FROM "Thread" t
       JOIN "Item" u ON u."threadId" = t.id AND u.role = 'user' AND u.position > COALESCE(t."importLearnedThrough", -1)
       ${ANSWER}
       WHERE t."userId" = $1 AND t."importLearn" = 'queued'
       ORDER BY t."createdAt", t.id, u.position
       LIMIT 1`;
const NEW = `SELECT t.id AS "threadId", x.id AS "userItemId", x.position, x.question, x.answer, t."importLearnedThrough" AS learned
       FROM "Thread" t
       CROSS JOIN LATERAL (
         SELECT u.id, u.position, u.content AS question, a.content AS answer FROM "Item" u ${ANSWER}
         WHERE u."threadId" = t.id AND u.role = 'user' AND u.position > COALESCE(t."importLearnedThrough", -1)
         ORDER BY u.position LIMIT 1
       ) x
       WHERE t."userId" = $1 AND t."importLearn" = 'queued'
       ORDER BY t."createdAt", t.id
       LIMIT 1`;
for (const engine of benchEngines()) {
  const t = await createTestDb(engine);
  const user = await t.db.user.create({ data: { email: "c@example.com" } });
  const N = Number(process.env.THREADS ?? 300);
  for (let k = 0; k < N; k++) {
    const th = await t.db.thread.create({ data: { userId: user.id, importSource: "chatgpt", importLearn: "queued", createdAt: new Date(Date.UTC(2025, 0, 1, 0, k)) } });
    await appendItems(t.db, th.id, Array.from({ length: 100 }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: `msg ${k} ${i}` })));
  }
  await t.db.$executeRawUnsafe("ANALYZE");
  for (const [name, sql] of [["old", OLD], ["new", NEW], ["old", OLD], ["new", NEW]] as const) {
    const ts: number[] = [];
    let row: unknown;
    for (let i = 0; i < 12; i++) {
      const t0 = performance.now();
      [row] = await t.db.$queryRawUnsafe<unknown[]>(sql, user.id);
      if (i >= 2) ts.push(performance.now() - t0);
    }
    ts.sort((a, b) => a - b);
    console.log(engine, name, `p50 ${ts[5].toFixed(1)} ms`, JSON.stringify(row).slice(0, 80));
  }
  await t.close();
}
process.exit(0);
