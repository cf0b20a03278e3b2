"use server";
// Data rights actions for the signed-in user, through userAction
// (lib/http/action.ts): delete the account, learn from imported conversations,
// paste another assistant's memory list. (File imports are route handlers,
// app/api/import and app/api/memories/import, for their bodies.)
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { userAction } from "@/lib/http/action";
import { AppError, NotFoundError } from "@/lib/errors";
import { signOut } from "@/auth";
import { verifyPassword } from "@/lib/auth/password";
import { consume } from "@/lib/auth/rate-limit";
import { CONFIRM_PHRASE, deleteAccount } from "@/lib/account/delete";
import { learnPlan, startLearning } from "@/lib/import/learn";
import { importMemoryList } from "@/lib/memory/portable";

export type { Result } from "@/lib/http/action";

/** OAuth-only accounts confirm with a sign-in made within this long. */
const FRESH_SIGN_IN_MS = 10 * 60_000;

const deleteInput = z.object({
  confirm: z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => v === CONFIRM_PHRASE, `Type "${CONFIRM_PHRASE}" to confirm.`),
  password: z.string().max(256).optional(),
  /** A sole admin names who becomes admin (lib/account/delete.ts). */
  successorId: z.string().min(1).max(64).optional(),
});

export const deleteAccountAction = userAction(
  z.tuple([deleteInput]),
  async ([input], { db, user: session }) => {
    const user = await db.user.findUnique({ where: { id: session.id }, select: { email: true, passwordHash: true } });
    if (!user) throw new NotFoundError("account");
    if (user.passwordHash) {
      await consume(db, [["signin-email", user.email]]);
      if (!input.password || !(await verifyPassword(input.password, user.passwordHash)))
        throw new AppError("That password is not right.");
    } else {
      const authAt = (session as { authAt?: number }).authAt ?? 0;
      if (Date.now() - authAt > FRESH_SIGN_IN_MS)
        throw new AppError("Sign out and sign in again with your provider, then delete the account within 10 minutes.");
    }
    await deleteAccount(db, session.id, { actorId: session.id, successorId: input.successorId });
    await signOut({ redirectTo: "/signin?deleted=1" });
  },
  { name: "deleteAccountAction" },
);

/** How far learning from imported conversations has got (polled by the data page while it runs). */
export const importLearnStatusAction = userAction(z.tuple([]), (_, { db, user }) => learnPlan(db, user.id));

/** Starts (or resumes) learning from the user's imported conversations. */
export const startImportLearnAction = userAction(z.tuple([]), async (_, { db, user }) => {
  const plan = await learnPlan(db, user.id);
  if (plan.paused) throw new AppError("Learning is paused. Turn it back on under Memory first.");
  if (!plan.remaining) throw new AppError("There is nothing left to learn from: import a conversation first.");
  await startLearning(db, user.id);
  return learnPlan(db, user.id);
});

const pasteInput = z.string().max(100_000, "That is too long (at most 100,000 characters at a time).");

/** Each line of another assistant's memory list becomes a memory waiting for review. */
export const pasteMemoriesAction = userAction(z.tuple([pasteInput]), async ([text], ctx) => {
  const r = await importMemoryList(ctx, text);
  revalidatePath("/settings/memory");
  return r;
});
