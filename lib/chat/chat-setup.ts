// What the chat page needs besides the thread: whether a model is set up, the models people may pick and the one
// this chat answers with, the message limit. One home for the three pages that open a chat.
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { resolveConnection } from "@/lib/llm/connection";
import { chooseModel } from "@/lib/llm/models";

export type PickerModel = { id: string; label: string; vision: boolean };
export type ChatSetup = {
  modelMissing: string | null;
  maxChars: number;
  /** The models on offer, the default first (empty when no model is set up). */
  models: PickerModel[];
  /** The model this chat answers with now (its own pick, its project's, else the default). */
  model: string | null;
};

export async function chatSetup(db: Db, picks: { thread?: string | null; project?: string | null } = {}) {
  const state = await resolveConnection(db);
  const maxChars = getConfig().chat.maxMessageChars;
  if (!state.configured) return { modelMissing: state.reason, maxChars, models: [], model: null } as ChatSetup;
  const models = state.models.map(({ id, label, vision }) => ({ id, label, vision }));
  const model = chooseModel(state.models, picks.thread, picks.project).model.id;
  return { modelMissing: null, maxChars, models, model } as ChatSetup;
}
