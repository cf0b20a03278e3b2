// What left the box: which memories went to which model, at which endpoint, through which client, and when. Every
// model request that carried memories (a chat turn, a /v1 completion) and every MCP answer that read them is
// recorded as one MemorySend row (memory ids, model, host, client, key); the data page answers "where did my
// memories go?" from them, per memory and per destination. The rows hold ids and host names only, no memory text.
//
// A memory marked private is never sent off this machine: recall, the tools and learning read private memories only
// when the model they go to is on a local address (loopback, private networks, or a host the admin lists in
// MNEMO_LOCAL_ENDPOINTS); an MCP client's model is never counted as local.
import { isIP } from "node:net";
import type { Db } from "@/lib/db/types";
import type { UserContext } from "@/lib/user-context";
import { getConfig } from "@/lib/config";

/** Where the `openai` SDK goes when no base URL is set. */
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** host[:port] of a model server's base URL ("" when it is not a URL). */
export function endpointHost(baseURL: string | undefined): string {
  try {
    return new URL(baseURL || DEFAULT_BASE_URL).host.toLowerCase();
  } catch {
    return "";
  }
}

const privateV4 = (ip: string) => {
  const [a, b] = ip.split(".").map(Number);
  return (
    a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)
  );
};
const privateV6 = (ip: string) => {
  const s = ip.toLowerCase();
  return (
    s === "::1" || s.startsWith("fc") || s.startsWith("fd") || s.startsWith("fe80:") || s.startsWith("::ffff:127.")
  );
};

/** Whether a model server counts as on this machine (or its private network): private memories may go to it. */
export function isLocalEndpoint(baseURL: string | undefined): boolean {
  const host = endpointHost(baseURL);
  if (!host) return false;
  if (getConfig().localEndpoints.includes(host)) return true;
  const name = new URL(baseURL || DEFAULT_BASE_URL).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (getConfig().localEndpoints.includes(name)) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  const kind = isIP(name);
  return kind === 4 ? privateV4(name) : kind === 6 ? privateV6(name) : false;
}

export type SendRecord = {
  userId: string;
  memoryIds: string[];
  model: string;
  /** The model server's base URL (its host is kept), or "mcp" for an MCP client. */
  baseURL: string | undefined;
  client: "web" | "api" | "mcp";
  apiKeyId?: string | null;
};

/** Records one request that carried memories (nothing when it carried none). */
export async function recordSend(db: Db, r: SendRecord): Promise<void> {
  if (!r.memoryIds.length) return;
  const mcp = r.baseURL === "mcp";
  await db.memorySend.create({
    data: {
      userId: r.userId,
      memoryIds: [...new Set(r.memoryIds)],
      model: r.model,
      endpoint: mcp ? "mcp" : endpointHost(r.baseURL),
      local: mcp ? false : isLocalEndpoint(r.baseURL),
      client: r.client,
      apiKeyId: r.apiKeyId ?? null,
    },
  });
}

export type Destination = {
  model: string;
  endpoint: string;
  local: boolean;
  times: number;
  /** How many of those times through each client: "web chat", "key 'laptop'", "MCP, key 'cursor'". */
  byClient: Array<{ client: string; times: number }>;
};
export type MemoryTrail = { memoryId: string; text: string; private: boolean; destinations: Destination[] };

/** Where the user's memories went in the last `days` days: per memory (most sent first) and per destination. */
export async function whereMemoriesWent(u: UserContext, days = 7) {
  const since = new Date(Date.now() - days * 86_400_000);
  const rows = await u.db.$queryRaw<
    Array<{
      memoryId: string;
      model: string;
      endpoint: string;
      local: boolean;
      client: string;
      keyName: string | null;
      n: number;
    }>
  >`
    SELECT x."memoryId", s.model, s.endpoint, s.local, s.client, k.name AS "keyName", count(*)::int AS n
    FROM "MemorySend" s CROSS JOIN LATERAL unnest(s."memoryIds") AS x("memoryId")
    LEFT JOIN "ApiKey" k ON k.id = s."apiKeyId"
    WHERE s."userId" = ${u.userId} AND s.at >= ${since}
    GROUP BY 1, 2, 3, 4, 5, 6
  `;
  const clientName = (client: string, key: string | null) =>
    client === "web" ? "web chat" : `${client === "mcp" ? "MCP, " : ""}key “${key ? u.cipher.open(key) : "deleted"}”`;
  const memories = rows.length
    ? await u.db.memory.findMany({
        where: { userId: u.userId, id: { in: [...new Set(rows.map((r) => r.memoryId))] } },
        select: { id: true, text: true, private: true },
      })
    : [];
  const byMemory = new Map<string, MemoryTrail>(
    memories.map((m) => [m.id, { memoryId: m.id, text: u.cipher.open(m.text), private: m.private, destinations: [] }]),
  );
  const perDestination = new Map<string, Destination & { memories: Set<string> }>();
  for (const r of rows) {
    const trail = byMemory.get(r.memoryId);
    const key = `${r.model}\u0000${r.endpoint}`;
    const client = clientName(r.client, r.keyName);
    if (trail) addTo(trail.destinations, r, client);
    const d = perDestination.get(key) ?? {
      model: r.model,
      endpoint: r.endpoint,
      local: r.local,
      times: 0,
      byClient: [],
      memories: new Set(),
    };
    d.memories.add(r.memoryId);
    perDestination.set(key, d);
  }
  const sends = await u.db.memorySend.groupBy({
    by: ["model", "endpoint", "client", "apiKeyId"],
    where: { userId: u.userId, at: { gte: since } },
    _count: { _all: true },
  });
  const keyNames = new Map(
    (await u.db.apiKey.findMany({ where: { userId: u.userId }, select: { id: true, name: true } })).map((k) => [
      k.id,
      k.name,
    ]),
  );
  for (const s of sends) {
    const d = perDestination.get(`${s.model}\u0000${s.endpoint}`);
    if (!d) continue;
    d.times += s._count._all;
    bump(d.byClient, clientName(s.client, s.apiKeyId ? (keyNames.get(s.apiKeyId) ?? null) : null), s._count._all);
  }
  const total = (t: MemoryTrail) => t.destinations.reduce((n, d) => n + d.times, 0);
  return {
    days,
    memories: [...byMemory.values()].sort((a, b) => total(b) - total(a)),
    destinations: [...perDestination.values()]
      .map(({ memories, ...d }) => ({ ...d, memories: memories.size }))
      .sort((a, b) => b.times - a.times),
  };
}

function addTo(list: Destination[], r: { model: string; endpoint: string; local: boolean; n: number }, client: string) {
  let d = list.find((x) => x.model === r.model && x.endpoint === r.endpoint);
  if (!d) list.push((d = { model: r.model, endpoint: r.endpoint, local: r.local, times: 0, byClient: [] }));
  d.times += r.n;
  bump(d.byClient, client, r.n);
}

function bump(list: Array<{ client: string; times: number }>, client: string, n: number) {
  const c = list.find((x) => x.client === client);
  if (c) c.times += n;
  else list.push({ client, times: n });
}
