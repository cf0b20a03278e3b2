// The one way to make a Prisma client over an open database. Every query's
// arguments pass through the text policy (lib/text/policy.ts), so a NUL or a
// lone surrogate that slipped past an input schema becomes a clean string
// (a "not found", or stored text) instead of a database error and an HTTP 500.
import { PrismaClient } from "@/lib/generated/prisma/client";
import { cleanDeep } from "@/lib/text/policy";
import { DATABASE_DOWN_DIGEST, isDatabaseUnavailable } from "@/lib/errors";

/**
 * Marks an unreachable-database error with a digest that Next.js passes to the
 * page's error boundary (app/error.tsx), which can then say what happened
 * instead of "something went wrong" (production strips every error message).
 */
function markUnavailable(e: unknown): never {
  if (e && typeof e === "object" && isDatabaseUnavailable(e)) (e as { digest?: string }).digest ??= DATABASE_DOWN_DIGEST;
  throw e;
}

export function newPrismaClient(adapter: unknown): PrismaClient {
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
  return clean as unknown as PrismaClient;
}
