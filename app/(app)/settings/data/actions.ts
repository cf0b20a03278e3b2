"use server";
// Data rights actions for the signed-in user: import memories, delete the account.
// Inputs are zod-checked; everything is scoped to the session's user.
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { signOut } from "@/auth";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { verifyPassword } from "@/lib/auth/password";
import { consume, RateLimitedError } from "@/lib/auth/rate-limit";
import { LastAdminError } from "@/lib/auth/users";
import { CONFIRM_PHRASE, deleteAccount } from "@/lib/account/delete";
import { importMemories, type ImportResult } from "@/lib/memory/portable";

export type Result<T = undefined> = { ok: true; data: T } | { ok: false; error: string };

const MAX_IMPORT_BYTES = 5_000_000;
const importInput = z.string().max(MAX_IMPORT_BYTES, "That file is too large (at most 5 MB).");

export async function importMemoriesAction(fileText: string): Promise<Result<ImportResult>> {
  const user = await requireUser();
  const text = importInput.safeParse(fileText);
  if (!text.success) return { ok: false, error: text.error.issues[0].message };
  let json: unknown;
  try {
    json = JSON.parse(text.data);
  } catch {
    return { ok: false, error: "That file is not JSON. Choose a memories file exported from Mnemo (.json)." };
  }
  try {
    const data = await importMemories(await getDb(), user.id, json);
    revalidatePath("/settings/memory");
    return { ok: true, data };
  } catch (e) {
    if (e instanceof z.ZodError) return { ok: false, error: e.issues[0].message };
    throw e;
  }
}

/** OAuth-only accounts confirm with a sign-in made within this long. */
const FRESH_SIGN_IN_MS = 10 * 60_000;

const deleteInput = z.object({
  confirm: z.string().trim().toLowerCase().refine((v) => v === CONFIRM_PHRASE, `Type "${CONFIRM_PHRASE}" to confirm.`),
  password: z.string().max(256).optional(),
});

export async function deleteAccountAction(input: z.input<typeof deleteInput>): Promise<Result> {
  const session = await requireUser();
  const parsed = deleteInput.safeParse(input);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: session.id }, select: { email: true, passwordHash: true } });
  if (!user) return { ok: false, error: "Account not found." };
  if (user.passwordHash) {
    try {
      await consume(db, [["signin-email", user.email]]);
    } catch (e) {
      if (e instanceof RateLimitedError) return { ok: false, error: e.message };
      throw e;
    }
    if (!parsed.data.password || !(await verifyPassword(parsed.data.password, user.passwordHash))) {
      return { ok: false, error: "That password is not right." };
    }
  } else {
    const authAt = (session as { authAt?: number }).authAt ?? 0;
    if (Date.now() - authAt > FRESH_SIGN_IN_MS) {
      return { ok: false, error: "Sign out and sign in again with your provider, then delete the account within 10 minutes." };
    }
  }
  try {
    await deleteAccount(db, session.id, { actorId: session.id });
  } catch (e) {
    if (e instanceof LastAdminError) return { ok: false, error: e.message };
    throw e;
  }
  await signOut({ redirectTo: "/signin?deleted=1" });
  return { ok: true, data: undefined };
}
