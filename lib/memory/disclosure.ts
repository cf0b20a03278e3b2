// What left the box: which memories went to which model, at which endpoint, through which client, and when. Every
// model request that carried memories (a chat turn, a /v1 completion) and every MCP answer that read them is
// recorded as one MemorySend row (memory ids, model, host, client, key; model and host sealed at rest), and so is
// the memory model's extraction, which is shown related memories. The data page answers "where did my memories go?"
// from them, per memory and per destination. No memory text is copied into them.
//
// A memory marked private is never sent off this machine: recall, the tools and learning read private memories only
// when the model they go to is on a local address (loopback, private networks, or a host the admin lists in
// MNEMO_LOCAL_ENDPOINTS); an MCP client's model is never counted as local.
import { isIP } from "node:net";
import type { Db } from "@/lib/db/types";
import type { UserContext } from "@/lib/user-context";
import type { ContentCipher } from "@/lib/crypto/content";
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
  /** The model server's base URL (its host is kept); "mcp" or "agent" for an MCP client's or an agent's own model. */
  baseURL: string | undefined;
  /**
   * "learning": the memory model's own calls (extraction, feedback lessons, consolidation, the summary);
   * "embedding": the embedding model, given a memory's text for its vector.
   */
  client: "web" | "api" | "mcp" | "agent" | "learning" | "embedding";
  apiKeyId?: string | null;
};

/** Records one request that carried memories (nothing when it carried none); model and host sealed at rest. */
export async function recordSend(db: Db, cipher: ContentCipher, r: SendRecord): Promise<void> {
  if (!r.memoryIds.length) return;
  const mcp = r.baseURL === "mcp" || r.baseURL === "agent";
  await db.memorySend.create({
    data: {
      userId: r.userId,
      memoryIds: [...new Set(r.memoryIds)],
      model: cipher.seal(r.model),
      endpoint: cipher.seal(mcp ? r.baseURL! : endpointHost(r.baseURL)),
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

/** Rows read for the data page at most (a week of very heavy use); the page says when it stopped there. */
const MAX_SENDS = 20_000;

/** Where the user's memories went in the last `days` days: per memory (most sent first) and per destination. */
export async function whereMemoriesWent(u: UserContext, days = 7) {
  const since = new Date(Date.now() - days * 86_400_000);
  const c = u.cipher;
  const [sends, keys] = await Promise.all([
    u.db.memorySend.findMany({
      where: { userId: u.userId, at: { gte: since } },
      orderBy: { at: "desc" },
      take: MAX_SENDS,
      select: { memoryIds: true, model: true, endpoint: true, local: true, client: true, apiKeyId: true },
    }),
    u.db.apiKey.findMany({ where: { userId: u.userId }, select: { id: true, name: true } }),
  ]);
  const keyName = new Map(keys.map((k) => [k.id, c.open(k.name)]));
  const clientName = (client: string, keyId: string | null) =>
    client === "web"
      ? "web chat"
      : client === "learning" || client === "agent" || client === "embedding"
        ? client
        : `${client === "mcp" ? "MCP, " : ""}key “${(keyId && keyName.get(keyId)) || "deleted"}”`;
  const perDestination = new Map<string, Destination & { memories: Set<string> }>();
  const perMemory = new Map<string, Destination[]>();
  for (const s of sends) {
    const d = { model: c.open(s.model), endpoint: c.open(s.endpoint), local: s.local };
    const key = `${d.model}\u0000${d.endpoint}`;
    const client = clientName(s.client, s.apiKeyId);
    const dest = perDestination.get(key) ?? { ...d, times: 0, byClient: [], memories: new Set<string>() };
    dest.times++;
    bump(dest.byClient, client, 1);
    for (const id of s.memoryIds) {
      dest.memories.add(id);
      const list = perMemory.get(id) ?? [];
      addTo(list, d, client);
      perMemory.set(id, list);
    }
    perDestination.set(key, dest);
  }
  const memories = perMemory.size
    ? await u.db.memory.findMany({
        where: { userId: u.userId, id: { in: [...perMemory.keys()] } },
        select: { id: true, text: true, private: true },
      })
    : [];
  const total = (t: MemoryTrail) => t.destinations.reduce((n, d) => n + d.times, 0);
  return {
    days,
    capped: sends.length === MAX_SENDS,
    memories: memories
      .map((m): MemoryTrail => ({
        memoryId: m.id,
        text: c.open(m.text),
        private: m.private,
        destinations: perMemory.get(m.id)!,
      }))
      .sort((a, b) => total(b) - total(a)),
    destinations: [...perDestination.values()]
      .map(({ memories: ids, ...d }) => ({ ...d, memories: ids.size }))
      .sort((a, b) => b.times - a.times),
  };
}

function addTo(list: Destination[], d: { model: string; endpoint: string; local: boolean }, client: string) {
  let found = list.find((x) => x.model === d.model && x.endpoint === d.endpoint);
  if (!found) list.push((found = { ...d, times: 0, byClient: [] }));
  found.times++;
  bump(found.byClient, client, 1);
}

function bump(list: Array<{ client: string; times: number }>, client: string, n: number) {
  const c = list.find((x) => x.client === client);
  if (c) c.times += n;
  else list.push({ client, times: n });
}
