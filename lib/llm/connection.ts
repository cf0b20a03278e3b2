// Where the model lives: the environment (OPENAI_*, MNEMO_*_MODEL), overridden
// field by field by what an admin saved on /admin/settings (key encrypted).
import { AppError } from "@/lib/errors";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { open, seal } from "@/lib/crypto/secret-box";
import { syncNotes } from "./server-notes";
import { forgetRecentVectors } from "./recent-vectors";
import {
  MODELS_SETTING_KEY,
  modelListSchema,
  modelsFrom,
  storedList,
  type ChatModel,
  type ModelListInput,
} from "./models";

const SETTING_KEY = "model-connection";
const PURPOSE = "model-api-key";
export const DEFAULT_OPENAI_MODEL = "gpt-4o-mini";

export type ModelConnection = {
  apiKey?: string;
  baseURL?: string;
  chatModel: string;
  memoryModel: string;
  /** For semantic recall (/v1/embeddings); undefined: recall by words only. */
  embeddingModel?: string;
  /** What the admin's model list says of the chat model (lib/llm/models.ts forModel). */
  chatVision?: boolean;
  chatContextTokens?: number | null;
};

export type ConnectionState =
  | {
      configured: true;
      connection: ModelConnection;
      /** The chat models people may use; the first is the default (the connection's chat model). */
      models: ChatModel[];
      source: { apiKey: Src; baseURL: Src; chatModel: Src };
    }
  | { configured: false; reason: string };
type Src = "admin" | "env" | "default" | "none";

/** What an admin can save. Empty strings mean "use the environment". */
export const savedConnectionSchema = z.object({
  baseURL: z
    .string()
    .trim()
    .max(500)
    .refine((v) => v === "" || /^https?:\/\/\S+$/.test(v), "Base URL must start with http:// or https://"),
  chatModel: z.string().trim().max(200, "Model name is at most 200 characters."),
  memoryModel: z.string().trim().max(200, "Model name is at most 200 characters."),
  embeddingModel: z.string().trim().max(200, "Model name is at most 200 characters.").default(""),
  apiKey: z.string().trim().max(1000).optional(), // undefined = keep the stored key
  clearApiKey: z.boolean().default(false),
});

type Stored = {
  baseURL?: string;
  chatModel?: string;
  memoryModel?: string;
  embeddingModel?: string;
  apiKeySealed?: string;
};

async function readStored(db: Db): Promise<Stored> {
  const row = await db.appSetting.findUnique({ where: { key: SETTING_KEY } });
  return (row?.value as Stored | undefined) ?? {};
}

/** The connection and the model list, read together (one round trip on every turn). */
async function readBoth(db: Db): Promise<{ s: Stored; list: unknown }> {
  const rows = await db.appSetting.findMany({ where: { key: { in: [SETTING_KEY, MODELS_SETTING_KEY] } } });
  const value = (key: string) => rows.find((r) => r.key === key)?.value ?? null;
  return { s: (value(SETTING_KEY) as Stored | null) ?? {}, list: value(MODELS_SETTING_KEY) };
}

/**
 * Saves the models people may use; the one marked default becomes the connection's chat model. Both in one
 * transaction, so the default is never a model the list left out.
 */
export async function saveModelList(db: Db, input: ModelListInput, adminId: string) {
  const data = modelListSchema.parse(input);
  const next: Stored = { ...(await readStored(db)), chatModel: data.defaultId };
  const list = storedList(data);
  await db.$transaction([
    db.appSetting.upsert({
      where: { key: SETTING_KEY },
      create: { key: SETTING_KEY, value: next, updatedBy: adminId },
      update: { value: next, updatedBy: adminId },
    }),
    db.appSetting.upsert({
      where: { key: MODELS_SETTING_KEY },
      create: { key: MODELS_SETTING_KEY, value: list, updatedBy: adminId },
      update: { value: list, updatedBy: adminId },
    }),
  ]);
}

/** For the admin form: never includes the key itself, only whether one is stored. */
export async function savedConnectionForForm(db: Db) {
  const s = await readStored(db);
  return {
    baseURL: s.baseURL ?? "",
    chatModel: s.chatModel ?? "",
    memoryModel: s.memoryModel ?? "",
    embeddingModel: s.embeddingModel ?? "",
    hasApiKey: !!s.apiKeySealed,
  };
}

/** The form's URL and model names as stored: an empty field falls back to the environment. */
function modelFields(data: z.output<typeof savedConnectionSchema>): Stored {
  return {
    baseURL: data.baseURL || undefined,
    chatModel: data.chatModel || undefined,
    memoryModel: data.memoryModel || undefined,
    embeddingModel: data.embeddingModel || undefined,
  };
}

export async function saveConnection(db: Db, input: z.input<typeof savedConnectionSchema>, adminId: string) {
  const data = savedConnectionSchema.parse(input);
  const prev = await readStored(db);
  const next: Stored = {
    ...modelFields(data),
    apiKeySealed: data.clearApiKey ? undefined : data.apiKey ? seal(data.apiKey, PURPOSE) : prev.apiKeySealed,
  };
  await db.appSetting.upsert({
    where: { key: SETTING_KEY },
    create: { key: SETTING_KEY, value: next, updatedBy: adminId },
    update: { value: next, updatedBy: adminId },
  });
}

function storedKeyOf(s: Stored): string | undefined {
  if (!s.apiKeySealed) return undefined;
  try {
    return open(s.apiKeySealed, PURPOSE);
  } catch {
    return undefined; // AUTH_SECRET changed: the admin must enter the key again
  }
}

export async function resolveConnection(db: Db): Promise<ConnectionState> {
  const { s, list } = await readBoth(db);
  return connectionFrom(s, storedKeyOf(s), list);
}

/**
 * The connection the model settings form describes, before it is saved (for "Test connection"): the typed values,
 * with the same fallbacks saving would give (an empty field uses the environment; the key field left empty keeps
 * the stored key, unless "remove the stored key" is ticked).
 */
export async function connectionFromForm(
  db: Db,
  input: z.input<typeof savedConnectionSchema>,
): Promise<ConnectionState> {
  const data = savedConnectionSchema.parse(input);
  const { s: stored, list } = await readBoth(db);
  const fields = modelFields(data);
  const storedKey = data.clearApiKey ? undefined : data.apiKey || storedKeyOf(stored);
  // The key in hand (saved, or set in the environment and never shown) goes only to the server it was given for:
  // testing another address needs the key typed again, or a typed URL would be a way to read it off the wire.
  const env = getConfig().model;
  const keyInHand = !data.apiKey && !data.clearApiKey && !!(storedKeyOf(stored) ?? env.apiKey);
  if (keyInHand && serverOf(fields.baseURL ?? env.baseURL) !== serverOf(stored.baseURL ?? env.baseURL))
    throw new AppError(
      "This is another server than the saved one: type its API key to test it (Mnemo sends the saved key only to the saved server), or leave the key empty and tick “remove the stored key” for a server that needs none.",
    );
  return connectionFrom(fields, storedKey, list);
}

/** A model server's address as far as a key is concerned: scheme, host and port (OpenAI's when none is set). */
function serverOf(baseURL: string | undefined): string {
  try {
    return new URL(baseURL ?? "https://api.openai.com/v1").origin;
  } catch {
    return baseURL ?? "";
  }
}

function connectionFrom(s: Stored, storedKey: string | undefined, list: unknown): ConnectionState {
  const env = getConfig().model;
  const apiKey = storedKey ?? env.apiKey;
  const baseURL = s.baseURL ?? env.baseURL;
  if (!apiKey && !baseURL) {
    return {
      configured: false,
      reason:
        "No model is configured. Set OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for Ollama, vLLM, LM Studio or another OpenAI-compatible server) and MNEMO_CHAT_MODEL, then restart, or ask an admin to set the connection on Admin → Model settings.",
    };
  }
  const explicitChat = s.chatModel ?? env.chatModel;
  if (!explicitChat && baseURL) {
    return {
      configured: false,
      reason: `A model server is set (${baseURL}) but no model name: set MNEMO_CHAT_MODEL (for example llama3.1 for Ollama) or ask an admin to set it on Admin → Model settings.`,
    };
  }
  const chatModel = explicitChat ?? DEFAULT_OPENAI_MODEL;
  return {
    configured: true,
    connection: {
      apiKey,
      baseURL,
      chatModel,
      memoryModel: s.memoryModel ?? env.memoryModel ?? chatModel,
      embeddingModel: s.embeddingModel ?? env.embeddingModel,
    },
    models: modelsFrom(list, chatModel),
    source: {
      apiKey: storedKey ? "admin" : env.apiKey ? "env" : "none",
      baseURL: s.baseURL ? "admin" : env.baseURL ? "env" : "default",
      chatModel: s.chatModel ? "admin" : env.chatModel ? "env" : "default",
    },
  };
}

// The chat path reads the connection on every turn; a few seconds of caching
// saves a database round trip while admin changes still apply almost at once.
const CACHE_MS = 5_000;
// One cache per process, on globalThis: Next.js bundles the admin's server action and the chat's route with their
// own copies of this module, and a save must clear the copy the chat reads.
type Cached = { at: number; value: Promise<ConnectionState> };
const g = globalThis as typeof globalThis & { __mnemoConnections?: WeakMap<Db, Cached> };
const cache = (g.__mnemoConnections ??= new WeakMap<Db, Cached>());
export function resolveConnectionCached(db: Db): Promise<ConnectionState> {
  const hit = cache.get(db);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
  // What other instances learned about the model server comes with it (the notes read with the connection).
  const value = Promise.all([resolveConnection(db), syncNotes(db).catch(() => undefined)]).then(([state]) => state);
  cache.set(db, { at: Date.now(), value });
  value.catch(() => cache.delete(db));
  return value;
}
/**
 * A model a person picks for a thread or a project: one on the admin's list (null: the default). Checked when it is
 * picked, and again on every turn (lib/llm/models.ts chooseModel), as the admin may take it off the list later.
 */
export async function offeredModel(db: Db, id: string | null | undefined): Promise<string | null> {
  if (!id) return null;
  const state = await resolveConnectionCached(db);
  if (!state.configured || !state.models.some((m) => m.id === id))
    throw new AppError(`${id} is not one of the models offered here; pick another.`);
  return id;
}

export function clearConnectionCache(db: Db) {
  cache.delete(db);
  forgetRecentVectors();
}

/** The connection with `m` as its chat model (its image and context facts go with it; lib/llm/models.ts). */
export function forModel(conn: ModelConnection, m: ChatModel): ModelConnection {
  return { ...conn, chatModel: m.id, chatVision: m.vision, chatContextTokens: m.contextTokens };
}
