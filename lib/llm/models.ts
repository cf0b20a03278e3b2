// The chat models people may use: the admin's list (display name, whether it sees images, its context size), kept
// beside the model connection. The connection's chat model is the default and always on the list. Every way in
// (the web chat, /v1, MCP's answer-less tools need none) picks its model here, so a model the admin removed is never
// asked, wherever the request came from.
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { ModelNotFoundError } from "@/lib/errors";

export const MODELS_SETTING_KEY = "chat-models";

export type ChatModel = {
  /** The name the model server knows it by. */
  id: string;
  /** What people see in the picker (the id when the admin gave none). */
  label: string;
  /** Whether pictures may go to it as image parts. */
  vision: boolean;
  /** Its context window in tokens, when the admin knows it (null: learned from the server's refusals). */
  contextTokens: number | null;
};

const modelId = z
  .string()
  .trim()
  .min(1, "Each model needs its name on the model server.")
  .max(200, "Model name is at most 200 characters.");

export const chatModelSchema = z.object({
  id: modelId,
  label: z.string().trim().max(80, "A display name is at most 80 characters.").default(""),
  vision: z.boolean().default(false),
  contextTokens: z
    .number()
    .int("The context size is a whole number of tokens.")
    .min(1_000, "A context size under 1,000 tokens is too small to chat.")
    .max(10_000_000)
    .nullable()
    .default(null),
});

export const modelListSchema = z
  .object({
    models: z.array(chatModelSchema).min(1, "List at least one model.").max(50, "At most 50 models."),
    defaultId: modelId,
  })
  .superRefine((v, ctx) => {
    const ids = v.models.map((m) => m.id);
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    if (twice) ctx.addIssue({ code: "custom", message: `"${twice}" is listed twice.`, path: ["models"] });
    if (!ids.includes(v.defaultId))
      ctx.addIssue({ code: "custom", message: "The default model must be on the list.", path: ["defaultId"] });
  });
export type ModelListInput = z.input<typeof modelListSchema>;

type StoredList = { models?: Array<Partial<ChatModel> & { id: string }> };

const entry = (m: Partial<ChatModel> & { id: string }): ChatModel => ({
  id: m.id,
  label: m.label || m.id,
  vision: !!m.vision,
  contextTokens: m.contextTokens ?? null,
});

/** The stored list as people see it: the default (the connection's chat model) first, always present. */
export function modelsFrom(stored: unknown, defaultId: string): ChatModel[] {
  const listed = ((stored as StoredList | null)?.models ?? []).filter((m) => typeof m?.id === "string").map(entry);
  const def = listed.find((m) => m.id === defaultId) ?? entry({ id: defaultId });
  return [def, ...listed.filter((m) => m.id !== defaultId)];
}

/** The list as saved (display names left empty are the id, so the stored list says only what the admin said). */
export function storedList(input: z.output<typeof modelListSchema>): StoredList {
  return {
    models: input.models.map((m) => ({
      id: m.id,
      label: m.label && m.label !== m.id ? m.label : undefined,
      vision: m.vision,
      contextTokens: m.contextTokens,
    })),
  };
}

export async function readStoredList(db: Db): Promise<unknown> {
  return (await db.appSetting.findUnique({ where: { key: MODELS_SETTING_KEY } }))?.value ?? null;
}

/** The names /v1 answers to besides the listed ids: "mnemo" (the docs' name) means the default. */
const DEFAULT_ALIASES = new Set(["mnemo", "default"]);

/**
 * The model for a turn. `wanted` in order of precedence (the turn's own pick, the thread's, the project's); the first
 * one set decides. A pick no longer on the list falls back to the default, with a note saying so.
 */
export function chooseModel(
  models: ChatModel[],
  ...wanted: Array<string | null | undefined>
): { model: ChatModel; note: string | null } {
  const pick = wanted.find((w) => !!w);
  const def = models[0];
  if (!pick || DEFAULT_ALIASES.has(pick)) return { model: def, note: null };
  const found = models.find((m) => m.id === pick);
  if (found) return { model: found, note: null };
  return { model: def, note: `${pick} is no longer offered here, so ${def.label} answered instead.` };
}

/** /v1's pick: the request's `model` must be on the list (clients list models first and pick one). */
export function modelForClient(models: ChatModel[], requested: string | null | undefined): ChatModel {
  if (!requested || DEFAULT_ALIASES.has(requested)) return models[0];
  const found = models.find((m) => m.id === requested);
  if (!found) throw new ModelNotFoundError(requested);
  return found;
}
