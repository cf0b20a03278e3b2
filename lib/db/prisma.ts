// The one way to make a Prisma client over an open database. Every query's
// arguments pass through the text policy (lib/text/policy.ts), so a NUL or a
// lone surrogate that slipped past an input schema becomes a clean string
// (a "not found", or stored text) instead of a database error and an HTTP 500.
import { PrismaClient } from "@/lib/generated/prisma/client";
import { cleanDeep } from "@/lib/text/policy";

export function newPrismaClient(adapter: unknown): PrismaClient {
  const base = new PrismaClient({ adapter: adapter as never });
  const clean = base.$extends({
    query: {
      $allModels: {
        $allOperations({ args, query }) {
          return query(cleanDeep(args));
        },
      },
    },
  });
  // The extension changes no method's shape; the app's type stays PrismaClient.
  return clean as unknown as PrismaClient;
}
