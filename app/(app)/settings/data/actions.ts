"use server";
// Data rights actions for the signed-in user: delete the account, learn from
// imported conversations, paste another assistant's memory list. (File imports
// are route handlers, app/api/import and app/api/memories/import, for their bodies.)
// Inputs are zod-checked; everything is scoped to the session's user.
import { LastAdminError, RateLimitedError } from "@/lib/errors";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { guard } from "@/lib/http/action";
import { signOut } from "@/auth";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { verifyPassword } from "@/lib/auth/password";
import { consume } from "@/lib/auth/rate-limit";
import { CONFIRM_PHRASE, deleteAccount } from "@/lib/account/delete";
import { learnPlan, startLearning, type LearnPlan } from "@/lib/import/learn";
import { importMemoryList, type ImportResult } from "@/lib/memory/portable";
import { toResult } from "@/lib/http/action";

export type { Result } from "@/lib/http/action";
import type { Result } from "@/lib/http/action";

/** OAuth-only accounts confirm with a sign-in made within this long. */
const FRESH_SIGN_IN_MS = 10 * 60_000;

const deleteInput = z.object({
  confirm: z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => v === CONFIRM_PHRASE, `Type "${CONFIRM_PHRASE}" to confirm.`),
  password: z.string().max(256).optional(),
});

export async function deleteAccountAction(input: z.input<typeof deleteInput>): Promise<Result> {
  return guard("deleteAccountAction", async () => {
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
        return {
          ok: false,
          error: "Sign out and sign in again with your provider, then delete the account within 10 minutes.",
        };
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
  });
}

/** How far learning from imported conversations has got (polled by the data page while it runs). */
export async function importLearnStatusAction(): Promise<Result<LearnPlan>> {
  return toResult("importLearnStatusAction", async () => learnPlan(await getDb(), (await requireUser()).id));
}

/** Starts (or resumes) learning from the user's imported conversations. */
export async function startImportLearnAction(): Promise<Result<LearnPlan>> {
  return guard("startImportLearnAction", async () => {
    const user = await requireUser();
    const db = await getDb();
    const plan = await learnPlan(db, user.id);
    if (plan.paused) return { ok: false, error: "Learning is paused. Turn it back on under Memory first." };
    if (!plan.remaining)
      return { ok: false, error: "There is nothing left to learn from: import a conversation first." };
    await startLearning(db, user.id);
    return { ok: true, data: await learnPlan(db, user.id) };
  });
}

const pasteInput = z.string().max(100_000, "That is too long (at most 100,000 characters at a time).");

/** Each line of another assistant's memory list becomes a memory waiting for review. */
export async function pasteMemoriesAction(text: z.input<typeof pasteInput>): Promise<Result<ImportResult>> {
  return toResult("pasteMemoriesAction", async () => {
    const user = await requireUser();
    const r = await importMemoryList(await getDb(), user.id, pasteInput.parse(text));
    revalidatePath("/settings/memory");
    return r;
  });
}
