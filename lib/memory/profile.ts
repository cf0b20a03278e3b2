// The memory profile: a user's memories as a whole, not only search results.
// When every active memory fits in the profile's share of the memory budget,
// all of them go into the prompt, whatever the message's words ("What pets do
// I have?" finds the dog). Past that, a core set always goes in (pinned,
// explicit and hand-made, most used) within a share of the budget, recall fills
// the rest by relevance, and the other memories whatever room is left.
// Order: pinned; explicit and manual; then inferred, by use and recency.
import type { UserContext } from "@/lib/user-context";
import { memoryScopeParams } from "@/lib/projects/scope";
import { callFunction } from "@/lib/db/function-calls";
import type { MemoryKind, MemorySource } from "@/lib/generated/prisma/client";

export type ProfileMemory = {
  id: string;
  text: string;
  kind: MemoryKind;
  needsRevalidation: boolean;
  source: MemorySource;
  pinned: boolean;
  sourceRef: string | null;
  tokens: number;
  uses: number;
  /** When it became true, else when it was learned. */
  since: Date;
};
/** With a fit budget, `count` and `cost` stop growing once the cost passes it: then they only say "more than fits". */
export type Profile = { memories: ProfileMemory[]; count: number; cost: number };

/** What one memory line costs in the prompt, beyond its text's tokens. */
export const MEMORY_LINE_OVERHEAD = 3;
/** Past the profile's share, the core set takes at most this share of the budget; relevance decides the rest. */
export const CORE_SHARE = 0.4;
/**
 * The whole profile goes in first when it costs at most this share of the budget. The rest is kept for what the
 * message is about (passages of earlier conversations above all): a profile that nearly fills the budget would
 * otherwise leave no room for the history a question needs. Past it, relevance has at least 1 - CORE_SHARE.
 */
export const PROFILE_SHARE = 0.6;

/**
 * The user's active memories in profile order (at most `limit`), with the count
 * and prompt cost of all of them. With `fitBudget` (recall), when they cost more
 * than that only the core set is read: the rest could not go in as profile.
 */
export async function loadProfile(u: UserContext, limit: number, fitBudget?: number): Promise<Profile> {
  const { db, userId } = u;
  type Row = Omit<ProfileMemory, "uses" | "id"> & { id: string | null; uses: number; n: number; cost: number };
  const rows = await callFunction<Row>(db, {
    // SQL in the migrations memory_profile_core_index and recall_reads_bounded_by_tokens (PL/pgSQL keeps its
    // plan): past the budget, counting stops and the core set is read group by group through an index.
    // Past the budget, rows of the core set come while those before them cost less than its share (migration
    // recall_reads_bounded_by_tokens), pinned ones always, at most as many as its share holds of the shortest lines.
    call: `mnemo_memory_profile($1, $2::int, $3::int, $4::int, $5::int, $6::int, $7::text, $8::boolean, $9::boolean)`,
    params: [
      userId,
      limit,
      MEMORY_LINE_OVERHEAD,
      fitBudget ?? null,
      fitBudget == null ? limit : Math.min(limit, Math.ceil((fitBudget * CORE_SHARE) / (MEMORY_LINE_OVERHEAD + 1))),
      fitBudget == null ? null : Math.ceil(fitBudget * CORE_SHARE),
      ...memoryScopeParams(u.scope),
    ],
    dates: ["since"],
  });
  const c = u.cipher;
  return {
    memories: rows.flatMap(({ n: _n, cost: _c, id, ...m }) =>
      id === null ? [] : [{ ...m, id, text: c.open(m.text) }],
    ),
    count: rows[0]?.n ?? 0,
    cost: rows[0]?.cost ?? 0,
  };
}

export type ProfileSelection = { take: ProfileMemory[]; rest: ProfileMemory[]; fits: boolean };

/**
 * The memories that always go in: all of them when they fit the profile's share of the budget, else the core set
 * within its share. `rest` are the other memories read, in profile order: recall adds them once relevance has
 * had its turn, as far as room is left (all of them are read whenever they fit the whole budget).
 */
export function profileSelection(p: Profile, budget: number): ProfileSelection {
  const all = p.memories.length === p.count;
  if (p.cost <= budget * PROFILE_SHARE && all) return { take: p.memories, rest: [], fits: true };
  const cap = budget * CORE_SHARE;
  const take: ProfileMemory[] = [];
  const rest: ProfileMemory[] = [];
  let used = 0;
  for (const m of p.memories) {
    const core = m.pinned || m.source !== "inferred" || m.uses > 0;
    const cost = m.tokens + MEMORY_LINE_OVERHEAD;
    if (!core || (used + cost > cap && !m.pinned)) {
      rest.push(m);
      continue;
    }
    take.push(m);
    used += cost;
  }
  return { take, rest, fits: false };
}
