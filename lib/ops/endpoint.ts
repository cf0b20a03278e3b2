// The app's side of operator commands on the embedded database: once it
// serves, it writes its loopback address into the owner file (lib/db/owner.ts),
// and POST /api/ops runs a command for whoever shows the file's secret.
import crypto from "node:crypto";
import { resolveDatabaseTarget } from "@/lib/db/engine";
import { announceOpsEndpoint, ownClaim } from "@/lib/db/owner";

/** Called by instrumentation.ts after startup: the app on the embedded database takes operator commands. */
export function announceOps(): void {
  const target = resolveDatabaseTarget();
  if (target.kind !== "pglite" || !target.pgliteDir) return;
  const port = process.env.PORT ?? "3000";
  // Next.js records where it listens; a wildcard or "localhost" is reached on loopback.
  const origin = process.env.__NEXT_PRIVATE_ORIGIN;
  const host = origin ? new URL(origin).hostname : "localhost";
  const loopback = ["localhost", "0.0.0.0", "[::]", "[::1]", "::", "::1"].includes(host) || host.startsWith("127.");
  const url = loopback ? `http://127.0.0.1:${port}` : `http://${host}:${port}`;
  announceOpsEndpoint(target.pgliteDir, url);
}

/** Whether a request carries this app's operator secret (readable only by who can read the data folder). */
export function opsAuthorized(request: Request): boolean {
  const target = resolveDatabaseTarget();
  if (target.kind !== "pglite" || !target.pgliteDir) return false;
  const claim = ownClaim(target.pgliteDir);
  if (!claim) return false;
  const given = Buffer.from(request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "");
  const expected = Buffer.from(claim.secret);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
