// Per-user daily limits on answers and model tokens, so an open instance
// cannot be used to spend the operator's model key without bound. Defaults
// come from MNEMO_DAILY_MESSAGE_LIMIT / MNEMO_DAILY_TOKEN_LIMIT (0: none); an
// admin can set a user's own. A day is a UTC day. Usage is read from the
// ledger (lib/account/usage-ledger.ts): answers asked (sends, edits,
// regenerations, retries) and the tokens of every model call, background work
// included; deleting threads gives nothing back.
//
// The chat's check is one SQL function call batched with the turn's context reads (no round trip of its
// own): the question is saved first, and an answer past the limit fails with a
// clear sentence, so nothing the user typed is lost. Background calls check
// the token limit before they run (`backgroundAllowed`).
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { ledgerDay } from "./usage-ledger";
import { count } from "@/lib/text/plural";
import { callFunction } from "@/lib/db/function-calls";

export type Usage = { messages: number; tokens: number };
export type Limits = { messages: number; tokens: number };

/** Today's answers asked and tokens spent, with this user's limits (0: none). */
export async function usageAndLimits(
  db: Db,
  userId: string,
  now = new Date(),
): Promise<{ usage: Usage; limits: Limits }> {
  const day = ledgerDay(now);
  const [row] = await db.$queryRaw<
    Array<{ messages: number | null; tokens: number | null; msgLimit: number | null; tokLimit: number | null }>
  >`
    SELECT (SELECT turns FROM "UsageDay" WHERE "userId" = u.id AND day = ${day}::date) AS messages,
           (SELECT tokens FROM "UsageDay" WHERE "userId" = u.id AND day = ${day}::date) AS tokens,
           u."dailyMessageLimit" AS "msgLimit", u."dailyTokenLimit" AS "tokLimit"
    FROM "User" u WHERE u.id = ${userId}
  `;
  const d = getConfig().limits;
  return {
    usage: { messages: row?.messages ?? 0, tokens: row?.tokens ?? 0 },
    limits: { messages: row?.msgLimit ?? d.dailyMessages, tokens: row?.tokLimit ?? d.dailyTokens },
  };
}

/** Why this turn may not call the model (null: it may). The turn asking is not counted yet. */
export function limitReached({ usage, limits }: { usage: Usage; limits: Limits }): string | null {
  const reset = "It resets at midnight UTC; your message is saved.";
  if (limits.messages > 0 && usage.messages >= limits.messages) {
    return `You have reached today's limit of ${count(limits.messages, "message")}. ${reset}`;
  }
  if (limits.tokens > 0 && usage.tokens >= limits.tokens) {
    return `You have used today's ${count(limits.tokens, "token")}. ${reset}`;
  }
  return null;
}

/**
 * Whether the user is at any of today's limits (answers or tokens), read afresh: work the user starts by a click
 * (a rating's lesson) costs no model call then, though the click itself is kept.
 */
export async function atDailyLimit(db: Db, userId: string): Promise<boolean> {
  return limitReached(await usageAndLimits(db, userId)) !== null;
}

/** Whether a background model or embedding call for this user may run now (today's tokens under the limit). */
export async function backgroundAllowed(db: Db, userId: string): Promise<boolean> {
  const d = getConfig().limits;
  if (!d.dailyTokens && !(await anyUserLimits(db))) return true;
  const { usage, limits } = await usageAndLimits(db, userId);
  return !(limits.tokens > 0 && usage.tokens >= limits.tokens);
}

export async function checkLimits(db: Db, userId: string): Promise<string | null> {
  const d = getConfig().limits;
  const hit = cache.__mnemoAnyLimits;
  const known = !!hit && Date.now() - hit.at < 60_000;
  // Nothing to check when no limit exists anywhere (the common case costs no query).
  if (!d.dailyMessages && !d.dailyTokens && known && !hit.value) return null;
  // One function call, made in the caller's tick: it joins the turn's batched read (lib/db/function-calls.ts).
  const [row] = await callFunction<UsageRow>(db, {
    call: "mnemo_usage_today($1, $2::date, $3::boolean)",
    params: [userId, ledgerDay(new Date()), !known],
  });
  if (!known && row) cache.__mnemoAnyLimits = { at: Date.now(), value: !!row.anyLimits };
  return limitReached({
    usage: { messages: row?.messages ?? 0, tokens: row?.tokens ?? 0 },
    limits: { messages: row?.msgLimit ?? d.dailyMessages, tokens: row?.tokLimit ?? d.dailyTokens },
  });
}

type UsageRow = {
  messages: number;
  tokens: number;
  msgLimit: number | null;
  tokLimit: number | null;
  anyLimits: boolean | null;
};

// Whether any user has a limit of their own, cached for a minute per process (on globalThis: Next.js bundles
// actions and route handlers apart, and an admin's change must reach the chat route of the same process at once).
const cache = globalThis as typeof globalThis & { __mnemoAnyLimits?: { at: number; value: boolean } | null };
async function anyUserLimits(db: Db): Promise<boolean> {
  const hit = cache.__mnemoAnyLimits;
  if (hit && Date.now() - hit.at < 60_000) return hit.value;
  const n = await db.user.count({ where: { OR: [{ dailyMessageLimit: { gt: 0 } }, { dailyTokenLimit: { gt: 0 } }] } });
  cache.__mnemoAnyLimits = { at: Date.now(), value: n > 0 };
  return n > 0;
}
export const forgetLimitsCache = () => (cache.__mnemoAnyLimits = null);

/** Today's usage for these users, from the ledger (the admin page). */
export async function usageTodayByUser(db: Db, userIds: string[], now = new Date()): Promise<Map<string, Usage>> {
  if (!userIds.length) return new Map();
  const rows = await db.$queryRaw<Array<{ userId: string } & Usage>>`
    SELECT "userId", turns AS messages, tokens FROM "UsageDay" WHERE "userId" = ANY(${userIds}::text[]) AND day = ${ledgerDay(now)}::date
  `;
  return new Map(rows.map(({ userId, ...u }) => [userId, u]));
}

/** An admin sets a user's limits (null: the instance default; 0: none). */
export async function setUserLimits(
  db: Db,
  userId: string,
  limits: { messages: number | null; tokens: number | null },
): Promise<void> {
  await db.user.update({
    where: { id: userId },
    data: { dailyMessageLimit: limits.messages, dailyTokenLimit: limits.tokens },
  });
  forgetLimitsCache();
}
