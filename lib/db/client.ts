// One PrismaClient per process (a globalThis singleton survives dev reloads).
// On the embedded database, pending migrations are applied before first use.
import { count } from "@/lib/text/plural";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Db } from "./types";
import { newPrismaClient } from "./prisma";
import { openDatabase, resolveDatabaseTarget, type OpenDatabase } from "./engine";
import { applyMigrations } from "./migrate";

export type { Db };

type Handle = { prisma: PrismaClient; database: OpenDatabase };
const g = globalThis as typeof globalThis & { __mnemoDb?: Promise<Handle> };

async function connect(): Promise<Handle> {
  const database = await openDatabase(resolveDatabaseTarget());
  if (database.target.kind === "pglite") {
    const applied = await database.withConnection((c) => applyMigrations(c));
    // A count (a fresh database applies every migration: their names filled a 2,400-character line), and the last.
    if (applied.length)
      console.log(`[mnemo] embedded database: applied ${count(applied.length, "migration")} (up to ${applied.at(-1)})`);
  }
  return { prisma: newPrismaClient(database.factory, database.pool), database };
}

export function getDatabase(): Promise<Handle> {
  g.__mnemoDb ??= connect().catch((e) => {
    g.__mnemoDb = undefined;
    throw e;
  });
  return g.__mnemoDb;
}

export async function getDb(): Promise<Db> {
  return (await getDatabase()).prisma;
}

export async function closeDb(): Promise<void> {
  const h = await g.__mnemoDb;
  g.__mnemoDb = undefined;
  if (h) {
    await h.prisma.$disconnect();
    await h.database.close();
  }
}
