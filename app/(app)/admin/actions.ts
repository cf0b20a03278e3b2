"use server";
// Admin-only actions. Each checks the session's role itself.
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { requireAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { LastAdminError, setDisabled, setRole } from "@/lib/auth/users";
import { resolveConnection, saveConnection, savedConnectionSchema } from "@/lib/llm/connection";
import { testConnection } from "@/lib/llm/client";

export type ActionResult = { ok: true; message?: string } | { ok: false; error: string };

const roleInput = z.object({ userId: z.string().min(1).max(64), role: z.enum(["USER", "ADMIN"]) });
const disableInput = z.object({ userId: z.string().min(1).max(64), disabled: z.boolean() });

export async function changeRoleAction(input: z.input<typeof roleInput>): Promise<ActionResult> {
  await requireAdmin();
  const parsed = roleInput.safeParse(input);
  if (!parsed.success) return { ok: false, error: "Invalid request." };
  try {
    await setRole(await getDb(), parsed.data.userId, parsed.data.role);
  } catch (e) {
    if (e instanceof LastAdminError) return { ok: false, error: e.message };
    throw e;
  }
  revalidatePath("/admin");
  return { ok: true };
}

export async function setDisabledAction(input: z.input<typeof disableInput>): Promise<ActionResult> {
  const admin = await requireAdmin();
  const parsed = disableInput.safeParse(input);
  if (!parsed.success) return { ok: false, error: "Invalid request." };
  if (parsed.data.userId === admin.id && parsed.data.disabled) return { ok: false, error: "You cannot disable your own account." };
  try {
    await setDisabled(await getDb(), parsed.data.userId, parsed.data.disabled);
  } catch (e) {
    if (e instanceof LastAdminError) return { ok: false, error: e.message };
    throw e;
  }
  revalidatePath("/admin");
  return { ok: true };
}

export async function saveModelSettingsAction(input: z.input<typeof savedConnectionSchema>): Promise<ActionResult> {
  const admin = await requireAdmin();
  const parsed = savedConnectionSchema.safeParse(input);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
  const db = await getDb();
  await saveConnection(db, parsed.data, admin.id);
  revalidatePath("/", "layout");
  return { ok: true, message: "Saved." };
}

export async function testModelConnectionAction(): Promise<ActionResult> {
  await requireAdmin();
  const state = await resolveConnection(await getDb());
  if (!state.configured) return { ok: false, error: state.reason };
  const r = await testConnection(state.connection);
  if (!r.ok) return { ok: false, error: r.error };
  const has = r.models.includes(state.connection.chatModel);
  return {
    ok: true,
    message: `Connected: ${r.models.length} model(s) available${has ? `, including ${state.connection.chatModel}` : `; "${state.connection.chatModel}" is not among them`}.`,
  };
}
