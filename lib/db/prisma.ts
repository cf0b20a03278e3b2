// The one way to make a Prisma client over an open database. Every query's
// arguments pass through the text policy (lib/text/policy.ts), so a NUL or a
// lone surrogate that slipped past an input schema becomes a clean string
// (a "not found", or stored text) instead of a database error and an HTTP 500.
import { PrismaClient } from "@/lib/generated/prisma/client";
import { cleanDeep } from "@/lib/text/policy";
import { markUnavailable } from "@/lib/errors";
import type { DirectPool } from "./engine";
import { readThroughPool } from "./function-calls";

/** `pool`: the open database's pool, used outside Prisma by the hot path's reads (PostgreSQL). */
export function newPrismaClient(adapter: unknown, pool: DirectPool | null = null): PrismaClient {
  const base = new PrismaClient({ adapter: adapter as never });
  const clean = base.$extends({
    query: {
      // Raw queries (no model) build their SQL from parameters the caller cleaned.
      $allOperations({ model, args, query }) {
        return query(model ? cleanDeep(args) : args).catch(markUnavailable);
      },
    },
  });
  // The extension changes no method's shape; the app's type stays PrismaClient.
  const client = clean as unknown as PrismaClient;
  if (pool) readThroughPool(client, pool);
  return client;
}
