"use server";
// API key actions, through userAction (lib/http/action.ts): each works on the signed-in user's keys only.
import { z } from "zod";
import { revalidatePath } from "next/cache";
import { userAction } from "@/lib/http/action";
import { apiKeyInput, createApiKey, revokeApiKey } from "@/lib/keys/api-keys";

/** Makes a key and returns it in full, this once. */
export const createApiKeyAction = userAction(z.tuple([apiKeyInput]), async ([input], ctx) => {
  const made = await createApiKey(ctx, input);
  revalidatePath("/settings/keys");
  return made;
});

export const revokeApiKeyAction = userAction(z.tuple([z.string().trim().min(1).max(64)]), async ([id], ctx) => {
  await revokeApiKey(ctx, id);
  revalidatePath("/settings/keys");
});
