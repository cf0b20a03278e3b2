// Encryption at rest for what users write and what Mnemo learns about them:
// message content (and tool-call arguments), summaries, memory text and memory
// versions. On when MNEMO_ENCRYPTION_KEY is set.
//
// Key hierarchy: the master key (from the environment, never stored) wraps one
// random 256-bit data key per user, stored in "UserKey" with the master key's id
// and a version. Values are AES-256-GCM with the user's id as associated data,
// stored as `enc1:<version>:<base64url(iv|tag|ciphertext)>`, so every row names
// the key that opens it. Deleting a user deletes their UserKey rows; any copy of
// their ciphertext is unreadable from then on (crypto-shredding).
//
// Search: the full-text index cannot read ciphertext, so encrypted rows also get
// `searchTokens`: each word stemmed and hashed with a per-user HMAC key. Queries
// hash their words the same way. Trade-off: equal words give equal tokens within
// one user's rows, so word frequencies (not words) are visible to whoever reads
// the database; ranking works as before.
import crypto from "node:crypto";
import { stem } from "@/lib/text/stem";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { ALTERNATIVES } from "@/lib/memory/related-words";
import { FORMS, MEANT } from "@/lib/memory/word-forms";

const PREFIX = "enc1:";

export interface ContentCipher {
  readonly enabled: boolean;
  /** The stored form of `text` (ciphertext when enabled). */
  seal(text: string): string;
  /** The readable form of a stored value (plain values pass through). */
  open(stored: string): string;
  /** The `searchTokens` column for `text`: null when not encrypting. */
  searchTokens(text: string): string | null;
  /** Query words as the index sees them, and the text-search configuration to parse them with. */
  searchTerms(words: string[]): { config: "english" | "simple"; terms: string[] };
}

export const isSealed = (v: unknown): v is string => typeof v === "string" && v.startsWith(PREFIX);

/** What a value looks like when it cannot be opened (no key, or the key was destroyed). */
export const UNREADABLE = "[encrypted: not readable without its key]";

export const plainCipher: ContentCipher = {
  enabled: false,
  seal: (t) => t,
  open: (s) => (isSealed(s) ? UNREADABLE : s),
  searchTokens: () => null,
  searchTerms: (words) => ({ config: "english", terms: words }),
};

// ---- master key ---------------------------------------------------------------

let override: { key?: string; previousKey?: string } | undefined;
/** Tests and scripts: use these master keys instead of the configuration. */
export function setEncryptionKeys(keys: { key?: string; previousKey?: string } | undefined) {
  override = keys;
  cache.clear();
}
const masterKeys = () => override ?? getConfig().encryption;
export const encryptionKeysInUse = masterKeys;
export const encryptionEnabled = () => !!masterKeys().key;

export function masterKeyId(secret: string): string {
  return crypto.createHash("sha256").update(`mnemo-master-key-id:${secret}`).digest("hex").slice(0, 12);
}
const wrapKey = (secret: string) =>
  Buffer.from(crypto.hkdfSync("sha256", secret, "mnemo-master", "wrap-user-keys", 32));

function gcmSeal(key: Buffer, plain: Buffer, aad: string): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString("base64url");
}
function gcmOpen(key: Buffer, sealed: string, aad: string): Buffer {
  const buf = Buffer.from(sealed, "base64url");
  const d = crypto.createDecipheriv("aes-256-gcm", key, buf.subarray(0, 12));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(buf.subarray(12, 28));
  return Buffer.concat([d.update(buf.subarray(28)), d.final()]);
}

export function wrapDataKey(secret: string, userId: string, dataKey: Buffer) {
  return { masterKeyId: masterKeyId(secret), wrapped: gcmSeal(wrapKey(secret), dataKey, `user-key:${userId}`) };
}
export function unwrapDataKey(secret: string, userId: string, wrapped: string): Buffer {
  return gcmOpen(wrapKey(secret), wrapped, `user-key:${userId}`);
}

// ---- per-user data keys ---------------------------------------------------------

type UserKeys = { current: number; keys: Map<number, Buffer>; loadedAt: number };
// One cache per process (Next.js gives routes and server actions their own copies of this module): forgetting a
// deleted account's keys must reach every copy.
const g = globalThis as typeof globalThis & { __mnemoUserKeys?: Map<string, UserKeys> };
const cache = (g.__mnemoUserKeys ??= new Map<string, UserKeys>());
// Re-read now and then, so every instance picks up a rotated data key.
const CACHE_MS = 5 * 60_000;

class KeyMissingError extends Error {}

async function loadUserKeys(db: Db, userId: string, create: boolean): Promise<UserKeys | null> {
  const hit = cache.get(userId);
  if (hit && Date.now() - hit.loadedAt < CACHE_MS) return hit;
  const { key, previousKey } = masterKeys();
  if (!key) return null;
  let rows = await db.userKey.findMany({ where: { userId }, orderBy: { version: "asc" } });
  if (!rows.length) {
    if (!create) return null;
    const w = wrapDataKey(key, userId, crypto.randomBytes(32));
    // Two instances may race to make the first key: one insert wins, both read it back.
    await db.$executeRaw`
      INSERT INTO "UserKey" ("userId", version, "masterKeyId", wrapped)
       SELECT ${userId}, 1, ${w.masterKeyId}, ${w.wrapped} WHERE EXISTS (SELECT 1 FROM "User" WHERE id = ${userId}) ON CONFLICT DO NOTHING
    `;
    rows = await db.userKey.findMany({ where: { userId }, orderBy: { version: "asc" } });
    if (!rows.length) throw new KeyMissingError("No such user.");
  }
  const ids = new Map([[masterKeyId(key), key]]);
  if (previousKey) ids.set(masterKeyId(previousKey), previousKey);
  const keys = new Map<number, Buffer>();
  for (const r of rows) {
    const secret = ids.get(r.masterKeyId);
    if (!secret)
      throw new KeyMissingError(
        `User key ${r.version} is wrapped by master key ${r.masterKeyId}, which is not configured (set MNEMO_ENCRYPTION_KEY_PREVIOUS during rotation).`,
      );
    keys.set(r.version, unwrapDataKey(secret, userId, r.wrapped));
  }
  const loaded = { current: rows[rows.length - 1].version, keys, loadedAt: Date.now() };
  cache.set(userId, loaded);
  return loaded;
}

/** Forgets cached keys (after rotation or account deletion). */
export function forgetCachedKeys(userId?: string) {
  if (userId) cache.delete(userId);
  else cache.clear();
}

// Kept on a few lines (one word per line would fill a screen).
// prettier-ignore
const STOP = new Set([
  "the", "a", "an", "and", "or", "is", "are", "was", "were", "be", "been", "to", "of", "in", "on", "for",
  "it", "that", "this", "with", "at", "by", "as", "i", "you", "he", "she", "we", "they",
]);

/** How much of a message its search entry reads (PostgreSQL refuses a tsvector over 1 MB). */
export const SEARCH_CHARS = 150_000;

/** Words as the keyed index sees them: lower-cased, stop words out, Porter-stemmed. */
export function indexWords(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP.has(w)).map((w) => stem(w));
}

function userCipher(userId: string, k: UserKeys): ContentCipher {
  const tokenKey = Buffer.from(crypto.hkdfSync("sha256", k.keys.get(k.current)!, "mnemo-search", "tokens", 32));
  // Letters only (a-p per nibble) so the text-search parser keeps each token whole.
  const token = (w: string) =>
    "k" +
    [...crypto.createHmac("sha256", tokenKey).update(w).digest().subarray(0, 8)]
      .map((b) => String.fromCharCode(97 + (b >> 4), 97 + (b & 15)))
      .join("");
  return {
    enabled: true,
    seal(text) {
      return `${PREFIX}${k.current}:${gcmSeal(k.keys.get(k.current)!, Buffer.from(text, "utf8"), userId)}`;
    },
    open(stored) {
      if (!isSealed(stored)) return stored;
      const [, v, body] = stored.split(":");
      const key = k.keys.get(Number(v));
      if (!key || body === undefined) return UNREADABLE;
      try {
        return gcmOpen(key, body, userId).toString("utf8");
      } catch {
        return UNREADABLE;
      }
    },
    // The search entry reads the first SEARCH_CHARS of a message (migration search_reads_bounded_text).
    searchTokens: (text) => [...new Set(indexWords(text.slice(0, SEARCH_CHARS)))].map(token).join(" "),
    // A term with alternatives (lib/memory/related-words.ts) or other forms (lib/memory/word-forms.ts) stays one
    // term: each alternative its words' tokens, the separators kept.
    searchTerms: (words) => ({
      config: "simple",
      terms: [
        ...new Set(
          words.flatMap((w) =>
            SEPARATOR.test(w)
              ? [
                  w
                    .split(SEPARATORS)
                    .map((a, i) => (i % 2 ? a : indexWords(a).map(token).join(" ")))
                    .join(""),
                ]
              : indexWords(w).map(token),
          ),
        ),
      ],
    }),
  };
}

/** The cipher for one user's content: plain when encryption is off. */
export async function cipherFor(db: Db, userId: string): Promise<ContentCipher> {
  if (!encryptionEnabled()) return plainCipher;
  const k = await loadUserKeys(db, userId, true);
  return k ? userCipher(userId, k) : plainCipher;
}

/** A term's alternatives' separators: kept (captured) when a term is split. */
const SEPARATORS = new RegExp(`([${ALTERNATIVES}${FORMS}${MEANT}])`);
const SEPARATOR = new RegExp(`[${ALTERNATIVES}${FORMS}${MEANT}]`);

/** Tool calls are JSON; encrypted, they are stored as one sealed JSON string. */
export function sealJson<T>(c: ContentCipher, value: T): T | string {
  return c.enabled && value != null ? c.seal(JSON.stringify(value)) : value;
}
export function openJson<T>(c: ContentCipher, stored: T | string | null): T | null {
  if (typeof stored === "string" && isSealed(stored)) {
    const s = c.open(stored);
    try {
      return JSON.parse(s) as T;
    } catch {
      return null;
    }
  }
  return stored as T | null;
}
