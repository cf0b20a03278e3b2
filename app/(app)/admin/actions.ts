"use server";
// Admin-only actions. Each checks the session's role itself.
import { AdminAccessDisabledError, EmailTakenError, LastAdminError, NotFoundError } from "@/lib/errors";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { guard } from "@/lib/http/action";
import { requireAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { createUser, setDisabled, setRole } from "@/lib/auth/users";
import {
  clearConnectionCache,
  connectionFromForm,
  saveConnection,
  savedConnectionForForm,
  savedConnectionSchema,
} from "@/lib/llm/connection";

import { queueReembedAll } from "@/lib/memory/embed";
import { testConnection } from "@/lib/llm/client";
import { deleteAccount } from "@/lib/account/delete";
import { recordAudit, reasonSchema, reviewMemories, reviewThread } from "@/lib/admin/review";
import { type ThreadView } from "@/lib/chat/threads";
import { setUserLimits } from "@/lib/account/usage-limits";
import { setTemporaryPassword } from "@/lib/auth/password-change";
import { createInvitation } from "@/lib/auth/registration";
import { count } from "@/lib/text/plural";

export type ActionResult = { ok: true; message?: string } | { ok: false; error: string };

const roleInput = z.object({ userId: z.string().min(1).max(64), role: z.enum(["USER", "ADMIN"]) });
const disableInput = z.object({ userId: z.string().min(1).max(64), disabled: z.boolean() });

export async function changeRoleAction(input: z.input<typeof roleInput>): Promise<ActionResult> {
  return guard("changeRoleAction", async () => {
    const admin = await requireAdmin();
    const parsed = roleInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: "Invalid request." };
    try {
      const db = await getDb();
      await setRole(db, parsed.data.userId, parsed.data.role);
      await recordAudit(db, {
        actorId: admin.id,
        subjectUserId: parsed.data.userId,
        action: "user.role",
        detail: { role: parsed.data.role },
      });
    } catch (e) {
      if (e instanceof LastAdminError) return { ok: false, error: e.message };
      throw e;
    }
    revalidatePath("/admin");
    return { ok: true };
  });
}

export async function setDisabledAction(input: z.input<typeof disableInput>): Promise<ActionResult> {
  return guard("setDisabledAction", async () => {
    const admin = await requireAdmin();
    const parsed = disableInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: "Invalid request." };
    if (parsed.data.userId === admin.id && parsed.data.disabled)
      return { ok: false, error: "You cannot disable your own account." };
    try {
      const db = await getDb();
      await setDisabled(db, parsed.data.userId, parsed.data.disabled);
      await recordAudit(db, {
        actorId: admin.id,
        subjectUserId: parsed.data.userId,
        action: parsed.data.disabled ? "user.disable" : "user.enable",
      });
    } catch (e) {
      if (e instanceof LastAdminError) return { ok: false, error: e.message };
      throw e;
    }
    revalidatePath("/admin");
    return { ok: true };
  });
}

const limitsInput = z.object({
  userId: z.string().min(1).max(64),
  // null: the instance default; 0: no limit.
  messages: z.number().int().min(0).max(1_000_000).nullable(),
  tokens: z.number().int().min(0).max(1_000_000_000).nullable(),
});

/** Sets a user's daily message and token limits (recorded in the audit log). */
export async function setUsageLimitsAction(input: z.input<typeof limitsInput>): Promise<ActionResult> {
  return guard("setUsageLimitsAction", async () => {
    const admin = await requireAdmin();
    const parsed = limitsInput.safeParse(input);
    if (!parsed.success)
      return { ok: false, error: "Limits are whole numbers (0: no limit; empty: the instance default)." };
    const db = await getDb();
    const { userId, messages, tokens } = parsed.data;
    if (!(await db.user.findUnique({ where: { id: userId }, select: { id: true } })))
      return { ok: false, error: "User not found." };
    await setUserLimits(db, userId, { messages, tokens });
    await recordAudit(db, {
      actorId: admin.id,
      subjectUserId: userId,
      action: "user.limits",
      detail: { messages, tokens },
    });
    revalidatePath(`/admin/users/${userId}`);
    return { ok: true, message: "Limits saved." };
  });
}

/** Sets a temporary password for a user and returns it once; they must change it at their next sign-in. */
export async function setTemporaryPasswordAction(input: {
  userId: string;
}): Promise<ActionResult & { password?: string }> {
  return guard("setTemporaryPasswordAction", async () => {
    const admin = await requireAdmin();
    const parsed = z.object({ userId: z.string().min(1).max(64) }).safeParse(input);
    if (!parsed.success) return { ok: false, error: "Invalid request." };
    const db = await getDb();
    if (!(await db.user.findUnique({ where: { id: parsed.data.userId }, select: { id: true } })))
      return { ok: false, error: "User not found." };
    const password = await setTemporaryPassword(db, parsed.data.userId);
    await recordAudit(db, { actorId: admin.id, subjectUserId: parsed.data.userId, action: "user.password" });
    return { ok: true, password };
  });
}

const emailInput = z.object({
  email: z.string().trim().toLowerCase().email("Enter an email address.").max(320),
  name: z.string().trim().max(100).optional(),
});

/** An invitation link for one email (MNEMO_REGISTRATION=invite), shown once. */
export async function inviteUserAction(input: z.input<typeof emailInput>): Promise<ActionResult & { link?: string }> {
  return guard("inviteUserAction", async () => {
    const admin = await requireAdmin();
    const parsed = emailInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
    const db = await getDb();
    if (await db.user.findUnique({ where: { email: parsed.data.email }, select: { id: true } }))
      return { ok: false, error: "That email already has an account." };
    const token = await createInvitation(db, parsed.data.email);
    await recordAudit(db, { actorId: admin.id, action: "user.invite" });
    return {
      ok: true,
      link: `/register?invite=${encodeURIComponent(token)}&email=${encodeURIComponent(parsed.data.email)}`,
    };
  });
}

/** Creates an account with a temporary password (shown once, to be changed at the first sign-in). */
export async function createAccountAction(
  input: z.input<typeof emailInput>,
): Promise<ActionResult & { password?: string }> {
  return guard("createAccountAction", async () => {
    const admin = await requireAdmin();
    const parsed = emailInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
    const db = await getDb();
    let user;
    try {
      user = await createUser(db, { email: parsed.data.email, name: parsed.data.name || null });
    } catch (e) {
      if (e instanceof EmailTakenError) return { ok: false, error: "That email already has an account." };
      throw e;
    }
    const password = await setTemporaryPassword(db, user.id);
    await recordAudit(db, { actorId: admin.id, subjectUserId: user.id, action: "user.create" });
    revalidatePath("/admin");
    return { ok: true, password };
  });
}

export async function saveModelSettingsAction(input: z.input<typeof savedConnectionSchema>): Promise<ActionResult> {
  return guard("saveModelSettingsAction", async () => {
    const admin = await requireAdmin();
    const parsed = savedConnectionSchema.safeParse(input);
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
    const db = await getDb();
    const before = (await savedConnectionForForm(db)).embeddingModel;
    await saveConnection(db, parsed.data, admin.id);
    clearConnectionCache(db);
    revalidatePath("/", "layout");
    // A new embedding model: every row is embedded again, in the background.
    if (before !== parsed.data.embeddingModel) {
      const users = await queueReembedAll(db);
      if (users)
        return {
          ok: true,
          message: `Saved. Re-embedding the memories and messages of ${count(users, "user")} in the background.`,
        };
    }
    return { ok: true, message: "Saved." };
  });
}

/** Tests what the form says now (typed, not yet saved): an admin checks a URL before saving it. */
export async function testModelConnectionAction(input: z.input<typeof savedConnectionSchema>): Promise<ActionResult> {
  return guard("testModelConnectionAction", async () => {
    await requireAdmin();
    const parsed = savedConnectionSchema.safeParse(input);
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
    const state = await connectionFromForm(await getDb(), parsed.data);
    if (!state.configured) return { ok: false, error: state.reason };
    const r = await testConnection(state.connection);
    if (!r.ok) return { ok: false, error: r.error };
    const has = r.models.includes(state.connection.chatModel);
    return {
      ok: true,
      message: `Connected to ${state.connection.baseURL ?? "OpenAI"}: ${count(r.models.length, "model")} available${has ? `, including ${state.connection.chatModel}` : `; "${state.connection.chatModel}" is not among them`}.`,
    };
  });
}

const deleteUserInput = z.object({
  userId: z.string().min(1).max(64),
  confirmEmail: z.string().trim().toLowerCase().max(254),
  reason: reasonSchema,
});

/** Deletes another user's account (typed confirmation: their email address). */
export async function deleteUserAction(input: z.input<typeof deleteUserInput>): Promise<ActionResult> {
  return guard("deleteUserAction", async () => {
    const admin = await requireAdmin();
    const parsed = deleteUserInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
    if (parsed.data.userId === admin.id)
      return { ok: false, error: "Delete your own account from Settings → Your data." };
    const db = await getDb();
    const user = await db.user.findUnique({ where: { id: parsed.data.userId }, select: { email: true } });
    if (!user) return { ok: false, error: "Account not found." };
    if (user.email !== parsed.data.confirmEmail)
      return { ok: false, error: `Type the user's email address (${user.email}) to confirm.` };
    try {
      await deleteAccount(db, parsed.data.userId, { actorId: admin.id, reason: parsed.data.reason });
    } catch (e) {
      if (e instanceof LastAdminError || e instanceof NotFoundError) return { ok: false, error: e.message };
      throw e;
    }
    revalidatePath("/admin");
    return { ok: true, message: "Account deleted." };
  });
}

const reviewInput = z.object({ threadId: z.string().min(1).max(64), reason: z.string() });
export type ReviewResult<T> = { ok: true; data: T } | { ok: false; error: string };

/** Opens a user's thread read-only; writes the audit record first. */
export async function reviewThreadAction(input: z.input<typeof reviewInput>): Promise<ReviewResult<ThreadView>> {
  return guard("reviewThreadAction", async () => {
    const admin = await requireAdmin();
    const parsed = reviewInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: "Invalid request." };
    try {
      const { ownerId: _owner, ...view } = await reviewThread(
        await getDb(),
        admin.id,
        parsed.data.threadId,
        parsed.data.reason,
      );
      return { ok: true, data: view };
    } catch (e) {
      if (e instanceof z.ZodError) return { ok: false, error: e.issues[0].message };
      if (e instanceof AdminAccessDisabledError || e instanceof NotFoundError) return { ok: false, error: e.message };
      throw e;
    }
  });
}

const reviewMemoriesInput = z.object({ userId: z.string().min(1).max(64), reason: z.string() });
type ReviewedMemory = {
  id: string;
  text: string;
  kind: string;
  status: string;
  source: string;
  pinned: boolean;
  updatedAt: string;
};

/** A user's memories, read-only; writes the audit record first. */
export async function reviewMemoriesAction(
  input: z.input<typeof reviewMemoriesInput>,
): Promise<ReviewResult<ReviewedMemory[]>> {
  return guard("reviewMemoriesAction", async () => {
    const admin = await requireAdmin();
    const parsed = reviewMemoriesInput.safeParse(input);
    if (!parsed.success) return { ok: false, error: "Invalid request." };
    try {
      const rows = await reviewMemories(await getDb(), admin.id, parsed.data.userId, parsed.data.reason);
      return {
        ok: true,
        data: rows.map((m) => ({
          id: m.id,
          text: m.text,
          kind: m.kind,
          status: m.status,
          source: m.source,
          pinned: m.pinned,
          updatedAt: m.updatedAt.toISOString(),
        })),
      };
    } catch (e) {
      if (e instanceof z.ZodError) return { ok: false, error: e.issues[0].message };
      if (e instanceof AdminAccessDisabledError || e instanceof NotFoundError) return { ok: false, error: e.message };
      throw e;
    }
  });
}
