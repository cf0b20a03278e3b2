"use server";
// Admin-only actions, through adminAction (lib/http/action.ts): the caller must be an admin, the arguments are
// validated, and every read of a user's data is audited (lib/admin/review.ts).
import { AppError, EmailTakenError, NotFoundError } from "@/lib/errors";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { adminAction } from "@/lib/http/action";
import type { Db } from "@/lib/db/types";
import { createUser, setDisabled, setRole } from "@/lib/auth/users";
import {
  clearConnectionCache,
  connectionFromForm,
  resolveConnection,
  saveConnection,
  saveModelList,
  savedConnectionForForm,
  savedConnectionSchema,
} from "@/lib/llm/connection";

import { modelListSchema } from "@/lib/llm/models";
import { attachmentLimitsSchema, saveAttachmentLimits } from "@/lib/attachments/limits";
import { queueReembedAll } from "@/lib/memory/embed";
import { probeImages, testConnection } from "@/lib/llm/client";
import { forgetEverywhere } from "@/lib/llm/server-notes";
import { deleteAccount } from "@/lib/account/delete";
import { recordAudit, reasonSchema, reviewAttachment, reviewMemories, reviewThread } from "@/lib/admin/review";
import { type ThreadView } from "@/lib/chat/threads";
import { setUserLimits } from "@/lib/account/usage-limits";
import { setTemporaryPassword } from "@/lib/auth/password-change";
import { createInvitation } from "@/lib/auth/registration";
import { count } from "@/lib/text/plural";

const userId = z.string().min(1).max(64);
const roleInput = z.object({ userId, role: z.enum(["USER", "ADMIN"]) });
const disableInput = z.object({ userId, disabled: z.boolean() });

/** What an admin action reports: a sentence to show, and a secret shown once (a password, a link). */
export type Done = { message?: string; password?: string; link?: string };

async function mustExist(db: Db, id: string) {
  const user = await db.user.findUnique({ where: { id }, select: { id: true, email: true } });
  if (!user) throw new NotFoundError("user");
  return user;
}

export const changeRoleAction = adminAction(z.tuple([roleInput]), async ([input], { db, user: admin }) => {
  await setRole(db, input.userId, input.role);
  await recordAudit(db, {
    actorId: admin.id,
    subjectUserId: input.userId,
    action: "user.role",
    detail: { role: input.role },
  });
  revalidatePath("/admin");
  return {} as Done;
});

export const setDisabledAction = adminAction(z.tuple([disableInput]), async ([input], { db, user: admin }) => {
  if (input.userId === admin.id && input.disabled) throw new AppError("You cannot disable your own account.");
  await setDisabled(db, input.userId, input.disabled);
  await recordAudit(db, {
    actorId: admin.id,
    subjectUserId: input.userId,
    action: input.disabled ? "user.disable" : "user.enable",
  });
  revalidatePath("/admin");
  return {} as Done;
});

const LIMITS_HELP = "Limits are whole numbers (0: no limit; empty: the instance default).";
const limit = (max: number) =>
  z.number({ error: LIMITS_HELP }).int(LIMITS_HELP).min(0, LIMITS_HELP).max(max, LIMITS_HELP);
const limitsInput = z.object({
  userId,
  // null: the instance default; 0: no limit.
  messages: limit(1_000_000).nullable(),
  tokens: limit(1_000_000_000).nullable(),
});

/** Sets a user's daily message and token limits (recorded in the audit log). */
export const setUsageLimitsAction = adminAction(
  z.tuple([limitsInput]),
  async ([{ userId, messages, tokens }], { db, user: admin }) => {
    await mustExist(db, userId);
    await setUserLimits(db, userId, { messages, tokens });
    await recordAudit(db, {
      actorId: admin.id,
      subjectUserId: userId,
      action: "user.limits",
      detail: { messages, tokens },
    });
    revalidatePath(`/admin/users/${userId}`);
    return { message: "Limits saved." } as Done;
  },
);

/** Sets a temporary password for a user and returns it once; they must change it at their next sign-in. */
export const setTemporaryPasswordAction = adminAction(
  z.tuple([z.object({ userId })]),
  async ([input], { db, user: admin }) => {
    await mustExist(db, input.userId);
    const password = await setTemporaryPassword(db, input.userId);
    await recordAudit(db, { actorId: admin.id, subjectUserId: input.userId, action: "user.password" });
    return { password } as Done;
  },
);

const emailInput = z.object({
  email: z.string().trim().toLowerCase().email("Enter an email address.").max(320),
  name: z.string().trim().max(100).optional(),
});
const TAKEN = "That email already has an account.";

/** An invitation link for one email (MNEMO_REGISTRATION=invite), shown once. */
export const inviteUserAction = adminAction(z.tuple([emailInput]), async ([input], { db, user: admin }) => {
  if (await db.user.findUnique({ where: { email: input.email }, select: { id: true } })) throw new AppError(TAKEN);
  const token = await createInvitation(db, input.email);
  await recordAudit(db, { actorId: admin.id, action: "user.invite" });
  return {
    link: `/register?invite=${encodeURIComponent(token)}&email=${encodeURIComponent(input.email)}`,
  } as Done;
});

/** Creates an account with a temporary password (shown once, to be changed at the first sign-in). */
export const createAccountAction = adminAction(z.tuple([emailInput]), async ([input], { db, user: admin }) => {
  const user = await createUser(db, { email: input.email, name: input.name || null }).catch((e) => {
    throw e instanceof EmailTakenError ? new AppError(TAKEN, 409) : e;
  });
  const password = await setTemporaryPassword(db, user.id);
  await recordAudit(db, { actorId: admin.id, subjectUserId: user.id, action: "user.create" });
  revalidatePath("/admin");
  return { password } as Done;
});

export const saveModelSettingsAction = adminAction(
  z.tuple([savedConnectionSchema]),
  async ([input], { db, user: admin }) => {
    const before = (await savedConnectionForForm(db)).embeddingModel;
    await saveConnection(db, input, admin.id);
    clearConnectionCache(db);
    // Saved settings are tried afresh: what the instances learned about servers (features refused, prompt sizes
    // they read whole) may be what the admin just changed, e.g. a longer context given to the model.
    await forgetEverywhere(db);
    revalidatePath("/", "layout");
    // A new embedding model: every row is embedded again, in the background.
    if (before !== input.embeddingModel) {
      const users = await queueReembedAll(db);
      if (users)
        return {
          message: `Saved. Re-embedding the memories and messages of ${count(users, "user")} in the background.`,
        } as Done;
    }
    return { message: "Saved." } as Done;
  },
);

/** The chat models people may use, and the default (lib/llm/models.ts). */
export const saveModelListAction = adminAction(z.tuple([modelListSchema]), async ([input], { db, user: admin }) => {
  await saveModelList(db, input, admin.id);
  clearConnectionCache(db);
  revalidatePath("/", "layout");
  return { message: `Saved: ${count(input.models.length, "model")} offered.` } as Done;
});

/** How large a file may be and how much one person may keep (empty: the environment's). */
export const saveAttachmentLimitsAction = adminAction(
  z.tuple([attachmentLimitsSchema]),
  async ([input], { db, user: admin }) => {
    await saveAttachmentLimits(db, input, admin.id);
    return { message: "Saved." } as Done;
  },
);

/** Whether the saved server takes pictures for this model (one tiny request with an image part). */
export const probeImagesAction = adminAction(z.tuple([z.string().trim().min(1).max(200)]), async ([model], { db }) => {
  const state = await resolveConnection(db);
  if (!state.configured) throw new AppError(state.reason);
  const r = await probeImages(state.connection, model);
  if (!r.ok) throw new AppError(r.error);
  return {
    vision: r.vision,
    message: r.vision
      ? `${model} took a picture: it sees images.`
      : `${model} refused a picture: it does not see images.`,
  };
});

/** The models the saved connection's server lists (GET /models), to add to the list. */
export const serverModelsAction = adminAction(z.tuple([]), async (_args, { db }) => {
  const state = await resolveConnection(db);
  if (!state.configured) throw new AppError(state.reason);
  const r = await testConnection(state.connection);
  if (!r.ok) throw new AppError(r.error);
  return r.models.slice(0, 500).sort();
});

/** Tests what the form says now (typed, not yet saved): an admin checks a URL before saving it. */
export const testModelConnectionAction = adminAction(z.tuple([savedConnectionSchema]), async ([input], { db }) => {
  const state = await connectionFromForm(db, input);
  if (!state.configured) throw new AppError(state.reason);
  const r = await testConnection(state.connection);
  if (!r.ok) throw new AppError(r.error);
  const { baseURL, chatModel } = state.connection;
  const has = r.models.includes(chatModel);
  return {
    message: `Connected to ${baseURL ?? "OpenAI"}: ${count(r.models.length, "model")} available${has ? `, including ${chatModel}` : `; "${chatModel}" is not among them`}.`,
  } as Done;
});

const deleteUserInput = z.object({
  userId,
  confirmEmail: z.string().trim().toLowerCase().max(254),
  reason: reasonSchema,
});

/** Deletes another user's account (typed confirmation: their email address). */
export const deleteUserAction = adminAction(z.tuple([deleteUserInput]), async ([input], { db, user: admin }) => {
  if (input.userId === admin.id) throw new AppError("Delete your own account from Settings → Your data.");
  const user = await db.user.findUnique({ where: { id: input.userId }, select: { email: true } });
  if (!user) throw new NotFoundError("account");
  if (user.email !== input.confirmEmail)
    throw new AppError(`Type the user's email address (${user.email}) to confirm.`);
  await deleteAccount(db, input.userId, { actorId: admin.id, reason: input.reason });
  revalidatePath("/admin");
  return { message: "Account deleted." } as Done;
});

const reviewInput = z.object({ threadId: z.string().min(1).max(64), reason: z.string() });

/** Opens a user's thread read-only; writes the audit record first. */
export const reviewThreadAction = adminAction(z.tuple([reviewInput]), async ([input], { db, user: admin }) => {
  const { ownerId: _owner, ...view } = await reviewThread(db, admin.id, input.threadId, input.reason);
  return view as ThreadView;
});

const reviewAttachmentInput = z.object({ attachmentId: z.string().min(1).max(64), reason: z.string() });

/** Opens a file of a conversation under review; writes the audit record first. */
export const reviewAttachmentAction = adminAction(
  z.tuple([reviewAttachmentInput]),
  async ([input], { db, user: admin }) => reviewAttachment(db, admin.id, input.attachmentId, input.reason),
);

const reviewMemoriesInput = z.object({ userId, reason: z.string() });

/** A user's memories, read-only; writes the audit record first. */
export const reviewMemoriesAction = adminAction(
  z.tuple([reviewMemoriesInput]),
  async ([input], { db, user: admin }) => {
    const rows = await reviewMemories(db, admin.id, input.userId, input.reason);
    return rows.map((m) => ({
      id: m.id,
      text: m.text,
      kind: m.kind,
      status: m.status,
      source: m.source,
      pinned: m.pinned,
      updatedAt: m.updatedAt.toISOString(),
    }));
  },
);
