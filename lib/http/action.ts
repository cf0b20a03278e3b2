// The one wrapper for server actions: arguments are cleaned by the text policy,
// errors become { ok: false, error } with a message written for the user
// (lib/errors.ts), and Next.js's own control flow (redirects) passes through.
import { unstable_rethrow } from "next/navigation";
import { publicError } from "@/lib/errors";

export type Result<T = undefined> = { ok: true; data: T } | { ok: false; error: string };

export async function toResult<T>(where: string, fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, data: await fn() };
  } catch (e) {
    unstable_rethrow(e);
    return { ok: false, error: publicError(e, where).message };
  }
}

/** For actions that build their own result shape: any error becomes { ok: false, error }. */
export async function guard<T extends { ok: boolean }>(
  where: string,
  fn: () => Promise<T>,
): Promise<T | { ok: false; error: string }> {
  try {
    return await fn();
  } catch (e) {
    unstable_rethrow(e);
    return { ok: false, error: publicError(e, where).message };
  }
}
