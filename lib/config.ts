// All configuration, read once from the environment and validated with zod.
// A bad value stops startup with one line naming the variable and what it expects.
// Every variable is documented in .env.example and docs/configuration.md.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

const optional = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));
const intWithDefault = (def: number, min = 1) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? Number(v) : def))
    .pipe(z.number({ error: "a whole number" }).int(`a whole number >= ${min}`).min(min, `a whole number >= ${min}`));
// http or https only: "localhost:5110/v1" parses as a URL of the scheme "localhost:" and would be taken silently.
const url = (what: string) => optional.pipe(z.url({ protocol: /^https?$/, error: what }).optional());

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: optional.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL, or unset for the embedded database")
      .optional(),
  ),
  MNEMO_DATA_DIR: optional,
  DATABASE_POOL_SIZE: intWithDefault(10, 1),
  MNEMO_MIGRATIONS_DIR: optional,
  AUTH_SECRET: optional.pipe(
    z.string().min(32, "at least 32 characters (generate one with `openssl rand -base64 32`)").optional(),
  ),
  AUTH_GITHUB_ID: optional,
  AUTH_GITHUB_SECRET: optional,
  AUTH_GOOGLE_ID: optional,
  AUTH_GOOGLE_SECRET: optional,
  AUTH_OIDC_ISSUER: url("an https:// issuer URL"),
  AUTH_OIDC_ID: optional,
  AUTH_OIDC_SECRET: optional,
  AUTH_OIDC_NAME: optional,
  OPENAI_API_KEY: optional,
  OPENAI_BASE_URL: url("an http(s):// URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1"),
  MNEMO_CHAT_MODEL: optional,
  MNEMO_MEMORY_MODEL: optional,
  MNEMO_EMBEDDING_MODEL: optional,
  MNEMO_EMBEDDING_TIMEOUT_MS: intWithDefault(1500, 50),
  MNEMO_BUILTIN_EMBEDDINGS: optional.pipe(z.enum(["on", "off"], { error: "on or off" }).optional()),
  // 0: a quarter of the cores, one to four (lib/llm/builtin-embedder.ts).
  MNEMO_ENCODER_WORKERS: intWithDefault(0, 0).pipe(z.number().max(16, "at most 16")),
  MNEMO_MEMORY_MERGE_SIMILARITY: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? Number(v) : 0.92))
    .pipe(
      z
        .number({ error: "a number between 0.5 and 1.01" })
        .min(0.5, "a number between 0.5 and 1.01")
        .max(1.01, "a number between 0.5 and 1.01"),
    ),
  MNEMO_ATTRIBUTION_SIMILARITY: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? Number(v) : 0.6))
    .pipe(
      z
        .number({ error: "a number between 0 and 1.01" })
        .min(0, "a number between 0 and 1.01")
        .max(1.01, "a number between 0 and 1.01"),
    ),
  MNEMO_PASSWORD_MIN_LENGTH: intWithDefault(10, 8),
  MNEMO_SIGNIN_LIMIT_PER_EMAIL: intWithDefault(10),
  MNEMO_SIGNIN_LIMIT_PER_IP: intWithDefault(50),
  MNEMO_REGISTER_LIMIT_PER_IP: intWithDefault(20),
  MNEMO_RATE_LIMIT_WINDOW_SECONDS: intWithDefault(15 * 60),
  MNEMO_SIGNIN_COOLDOWN_SECONDS: intWithDefault(30),
  MNEMO_HISTORY_TOKEN_BUDGET: intWithDefault(6000, 200),
  MNEMO_HISTORY_MAX_ITEMS: intWithDefault(200, 2),
  MNEMO_SUMMARIES: optional.pipe(z.enum(["on", "off"], { error: "on or off" }).optional()),
  MNEMO_MAX_MESSAGE_CHARS: intWithDefault(20_000, 100),
  // Attachments (lib/attachments/): the largest file, and what one person may keep in all, in megabytes.
  MNEMO_ATTACHMENT_MAX_MB: intWithDefault(20, 1),
  MNEMO_ATTACHMENT_USER_MB: intWithDefault(500, 1),
  // Of the prompt, the tokens attached documents may take (a longer one gives its passages nearest the question).
  MNEMO_ATTACHMENT_TOKEN_BUDGET: intWithDefault(8_000, 500),
  // Files' bytes in S3-compatible object storage instead of the database (lib/attachments/file-store.ts).
  MNEMO_S3_BUCKET: optional,
  MNEMO_S3_ENDPOINT: url("an http(s) URL of the S3-compatible server, or unset for AWS S3"),
  MNEMO_S3_REGION: optional,
  MNEMO_S3_ACCESS_KEY_ID: optional,
  MNEMO_S3_SECRET_ACCESS_KEY: optional,
  MNEMO_S3_PREFIX: optional,
  MNEMO_S3_FORCE_PATH_STYLE: optional.pipe(z.enum(["on", "off"], { error: "on or off" }).optional()),
  MNEMO_SYSTEM_PROMPT: optional,
  MNEMO_MEMORY_TOKEN_BUDGET: intWithDefault(800, 0),
  MNEMO_MEMORY_EXPIRE_DAYS: intWithDefault(0, 0),
  MNEMO_ENCRYPTION_KEY: optional.pipe(
    z.string().min(32, "at least 32 characters (generate one with `openssl rand -base64 32`)").optional(),
  ),
  MNEMO_ENCRYPTION_KEY_PREVIOUS: optional,
  MNEMO_MESSAGE_RETENTION_DAYS: intWithDefault(0, 0),
  MNEMO_TEMPORARY_CHAT_HOURS: intWithDefault(24, 1),
  MNEMO_ADMIN_THREAD_ACCESS: optional.pipe(z.enum(["on", "off"], { error: "on or off" }).optional()),
  MNEMO_LOCAL_ENDPOINTS: optional.pipe(z.string().max(2000).optional()),
  MNEMO_MODEL_IDLE_TIMEOUT_SECONDS: intWithDefault(60, 1),
  MNEMO_JOBS: optional.pipe(z.enum(["on", "off"], { error: "on or off" }).optional()),
  MNEMO_JOB_LANES: intWithDefault(4, 1),
  MNEMO_TRUSTED_PROXIES: intWithDefault(0, 0),
  MNEMO_IMPORT_MAX_MB: intWithDefault(512, 1),
  MNEMO_IMPORT_LEARN_PER_MINUTE: intWithDefault(20, 1),
  MNEMO_PROCEDURE_REVALIDATE_DAYS: intWithDefault(90, 0),
  MNEMO_FEEDBACK_GRACE_SECONDS: intWithDefault(30, 0),
  MNEMO_DAILY_MESSAGE_LIMIT: intWithDefault(0, 0),
  MNEMO_REGISTRATION: optional.pipe(
    z.enum(["open", "invite", "closed"], { error: "open, invite or closed" }).optional(),
  ),
  MNEMO_DAILY_TOKEN_LIMIT: intWithDefault(0, 0),
  MNEMO_CONSOLIDATE_AFTER: intWithDefault(20, 1),
  MNEMO_MEMORY_LOW_VALUE_DAYS: intWithDefault(90, 0),
  MNEMO_SMTP_URL: optional.pipe(
    z
      .string()
      .regex(/^smtps?:\/\//, "an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587")
      .optional(),
  ),
  MNEMO_MAIL_FROM: optional,
  MNEMO_PUBLIC_URL: url("the http(s):// address users open Mnemo at, e.g. https://mnemo.example.com"),
});

/**
 * Memory consolidation: when procedures go stale, how many new memories start a run, when unused low-confidence ones
 * expire (0: never).
 */
export type Consolidation = { procedureRevalidateDays: number; afterNewMemories: number; lowValueDays: number };

export type Config = {
  env: "development" | "production" | "test";
  databaseUrl?: string;
  dataDir: string;
  authSecret: string;
  authSecretGenerated: boolean;
  oauth: {
    github?: { clientId: string; clientSecret: string };
    google?: { clientId: string; clientSecret: string };
    oidc?: { issuer: string; clientId: string; clientSecret: string; name: string };
  };
  model: { apiKey?: string; baseURL?: string; chatModel?: string; memoryModel?: string; embeddingModel?: string };
  /** How long a turn waits for the question's embedding before recalling by words alone. */
  embeddingTimeoutMs: number;
  /** Whether the built-in sentence encoder gives vectors when no embedding endpoint is set (MNEMO_BUILTIN_EMBEDDINGS). */
  builtinEmbeddings: boolean;
  /** The built-in encoder's worker threads; 0: sized to the cores. */
  encoderWorkers: number;
  passwordMinLength: number;
  rateLimit: {
    signinPerEmail: number;
    signinPerIp: number;
    registerPerIp: number;
    windowSeconds: number;
    cooldownSeconds: number;
  };
  chat: {
    historyTokenBudget: number;
    historyMaxItems: number;
    summaries: boolean;
    maxMessageChars: number;
    systemPrompt: string;
    /** A model stream silent for this long fails the answer. */
    modelIdleTimeoutSeconds: number;
  };
  attachments: { maxFileBytes: number; maxUserBytes: number; tokenBudget: number; s3: S3Config | null };
  /** Whether this instance runs background jobs in-process (off: `npm run worker` runs them). */
  jobsInProcess: boolean;
  /** How many jobs one process runs at once. */
  jobLanes: number;
  /** Reverse proxies in front of the app whose X-Forwarded-For entries are trusted. */
  trustedProxies: number;
  /** mergeSimilarity: memories whose vectors are at least this similar are merged (above 1: never). */
  memory: {
    tokenBudget: number;
    expireUnusedDays: number;
    mergeSimilarity: number;
    /** An answer whose vector is at least this similar to a memory it was given drew on it (above 1: never). */
    attributionSimilarity: number;
    consolidation: Consolidation;
    /** How long a comment-less 👎 waits for its comment before the memory model reads it. */
    feedbackGraceSeconds: number;
  };
  /** Master key for encryption at rest (undefined: stored in plain text); the previous one during rotation. */
  encryption: { key?: string; previousKey?: string };
  /** Messages older than this many days are hidden and then deleted (0: kept). */
  retention: { messageDays: number; temporaryChatHours: number };
  /** Whether admins may open users' threads and memories (always audited). */
  adminThreadAccess: boolean;
  /** Model server hosts the admin marks local, beside loopback and private addresses (private memories may go). */
  localEndpoints: string[];
  /** Largest export file accepted; memory-model calls per minute when learning from imported history. */
  import: { maxBytes: number; learnPerMinute: number };
  /** Who may create an account (lib/auth/registration.ts). */
  registration: "open" | "invite" | "closed";
  /** Default per-user daily limits (0: none); admins can set a user's own. */
  limits: { dailyMessages: number; dailyTokens: number };
  /** Outgoing email (password reset, registration notices); unset: Mnemo sends none. Links use publicUrl. */
  mail?: { smtpUrl: string; from: string; publicUrl: string };
};

export const DEFAULT_SYSTEM_PROMPT =
  "You are Mnemo, a helpful assistant. Answer clearly and concisely. Use Markdown for structure and code.";

/** Where the embedded database and the local secret live (MNEMO_DATA_DIR, default ./data). */
export function dataDirFromEnv(env: Record<string, string | undefined> = process.env): string {
  return path.resolve(/*turbopackIgnore: true*/ env.MNEMO_DATA_DIR?.trim() || "data");
}

/**
 * One variable validated on its own, with the same rule and one-line error as
 * the full config: for the database layer, which also runs in scripts
 * (db:migrate) where the rest of the configuration need not be complete.
 */
function single<K extends keyof typeof schema.shape>(name: K, env: Record<string, string | undefined>) {
  const r = schema.shape[name].safeParse(env[name]);
  if (!r.success) throw new ConfigError(name, r.error.issues[0].message);
  return r.data as z.output<(typeof schema.shape)[K]>;
}

/** PostgreSQL connections per instance (DATABASE_POOL_SIZE, default 10; empty means the default). */
export const databasePoolSize = (env: Record<string, string | undefined> = process.env): number =>
  single("DATABASE_POOL_SIZE", env);

/** The migrations folder (MNEMO_MIGRATIONS_DIR, default prisma/migrations). */
export const migrationsDirFromEnv = (env: Record<string, string | undefined> = process.env): string =>
  single("MNEMO_MIGRATIONS_DIR", env) ?? path.join(process.cwd(), "prisma", "migrations");

export class ConfigError extends Error {
  constructor(
    public variable: string,
    public expected: string,
  ) {
    super(`Invalid configuration: ${variable} must be ${expected}`);
  }
}

function pair(env: z.infer<typeof schema>, a: keyof typeof env, b: keyof typeof env) {
  const [va, vb] = [env[a] as string | undefined, env[b] as string | undefined];
  if (va && !vb) throw new ConfigError(b, `set when ${a} is set`);
  if (vb && !va) throw new ConfigError(a, `set when ${b} is set`);
  return va && vb ? { clientId: va, clientSecret: vb } : undefined;
}

/**
 * Development and the local launcher (scripts/start.ts) only: a secret made once
 * and kept under the data folder, beside the embedded database it protects.
 */
export function localAuthSecret(dataDir: string): { secret: string; generated: boolean } {
  const file = path.join(dataDir, "auth-secret");
  if (fs.existsSync(file)) return { secret: fs.readFileSync(file, "utf8").trim(), generated: false };
  const secret = crypto.randomBytes(32).toString("base64url");
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, secret + "\n", { mode: 0o600 });
  console.log(`[mnemo] AUTH_SECRET is not set: generated one for this local installation and saved it in ${file}`);
  return { secret, generated: true };
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(rawEnv);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue.path[0]), issue.message);
  }
  const env = parsed.data;
  const dataDir = dataDirFromEnv(rawEnv);

  let authSecret = env.AUTH_SECRET;
  let authSecretGenerated = false;
  if (!authSecret) {
    if (env.NODE_ENV === "production") {
      throw new ConfigError(
        "AUTH_SECRET",
        "set in production (at least 32 characters; generate one with `openssl rand -base64 32`)",
      );
    }
    const dev = localAuthSecret(dataDir);
    authSecret = dev.secret;
    authSecretGenerated = dev.generated;
  }

  const github = pair(env, "AUTH_GITHUB_ID", "AUTH_GITHUB_SECRET");
  const google = pair(env, "AUTH_GOOGLE_ID", "AUTH_GOOGLE_SECRET");
  const oidcPair = pair(env, "AUTH_OIDC_ID", "AUTH_OIDC_SECRET");
  if (oidcPair && !env.AUTH_OIDC_ISSUER) throw new ConfigError("AUTH_OIDC_ISSUER", "set when AUTH_OIDC_ID is set");
  if (env.AUTH_OIDC_ISSUER && !oidcPair) throw new ConfigError("AUTH_OIDC_ID", "set when AUTH_OIDC_ISSUER is set");

  // Links in emails must point at the real address, never at a Host header an attacker chose.
  if (env.MNEMO_SMTP_URL && !env.MNEMO_PUBLIC_URL)
    throw new ConfigError("MNEMO_PUBLIC_URL", "set when MNEMO_SMTP_URL is set");
  const mail =
    env.MNEMO_SMTP_URL && env.MNEMO_PUBLIC_URL
      ? {
          smtpUrl: env.MNEMO_SMTP_URL,
          from: env.MNEMO_MAIL_FROM ?? `Mnemo <no-reply@${new URL(env.MNEMO_PUBLIC_URL).hostname}>`,
          publicUrl: env.MNEMO_PUBLIC_URL.replace(/\/+$/, ""),
        }
      : undefined;

  return {
    env: env.NODE_ENV,
    databaseUrl: env.DATABASE_URL,
    dataDir,
    authSecret,
    authSecretGenerated,
    oauth: {
      github,
      google,
      oidc:
        oidcPair && env.AUTH_OIDC_ISSUER
          ? { ...oidcPair, issuer: env.AUTH_OIDC_ISSUER, name: env.AUTH_OIDC_NAME ?? "Single sign-on" }
          : undefined,
    },
    model: {
      apiKey: env.OPENAI_API_KEY,
      baseURL: env.OPENAI_BASE_URL,
      chatModel: env.MNEMO_CHAT_MODEL,
      memoryModel: env.MNEMO_MEMORY_MODEL,
      embeddingModel: env.MNEMO_EMBEDDING_MODEL,
    },
    embeddingTimeoutMs: env.MNEMO_EMBEDDING_TIMEOUT_MS,
    // The sentence encoder that runs in the app when no embedding endpoint is set (lib/llm/builtin-embedder.ts).
    builtinEmbeddings: env.MNEMO_BUILTIN_EMBEDDINGS !== "off",
    encoderWorkers: env.MNEMO_ENCODER_WORKERS,
    passwordMinLength: env.MNEMO_PASSWORD_MIN_LENGTH,
    rateLimit: {
      signinPerEmail: env.MNEMO_SIGNIN_LIMIT_PER_EMAIL,
      signinPerIp: env.MNEMO_SIGNIN_LIMIT_PER_IP,
      registerPerIp: env.MNEMO_REGISTER_LIMIT_PER_IP,
      windowSeconds: env.MNEMO_RATE_LIMIT_WINDOW_SECONDS,
      cooldownSeconds: env.MNEMO_SIGNIN_COOLDOWN_SECONDS,
    },
    attachments: {
      maxFileBytes: env.MNEMO_ATTACHMENT_MAX_MB * 1024 * 1024,
      maxUserBytes: env.MNEMO_ATTACHMENT_USER_MB * 1024 * 1024,
      tokenBudget: env.MNEMO_ATTACHMENT_TOKEN_BUDGET,
      s3: env.MNEMO_S3_BUCKET
        ? {
            bucket: env.MNEMO_S3_BUCKET,
            endpoint: env.MNEMO_S3_ENDPOINT ?? null,
            region: env.MNEMO_S3_REGION ?? "us-east-1",
            // Unset: the SDK's own chain (environment, shared files, instance roles).
            credentials:
              env.MNEMO_S3_ACCESS_KEY_ID && env.MNEMO_S3_SECRET_ACCESS_KEY
                ? { accessKeyId: env.MNEMO_S3_ACCESS_KEY_ID, secretAccessKey: env.MNEMO_S3_SECRET_ACCESS_KEY }
                : null,
            prefix: env.MNEMO_S3_PREFIX ?? "mnemo/attachments/",
            // Self-hosted servers (MinIO, Garage, SeaweedFS) want the bucket in the path.
            forcePathStyle: (env.MNEMO_S3_FORCE_PATH_STYLE ?? (env.MNEMO_S3_ENDPOINT ? "on" : "off")) === "on",
          }
        : null,
    },
    chat: {
      historyTokenBudget: env.MNEMO_HISTORY_TOKEN_BUDGET,
      historyMaxItems: env.MNEMO_HISTORY_MAX_ITEMS,
      summaries: env.MNEMO_SUMMARIES !== "off",
      maxMessageChars: env.MNEMO_MAX_MESSAGE_CHARS,
      systemPrompt: env.MNEMO_SYSTEM_PROMPT ?? DEFAULT_SYSTEM_PROMPT,
      modelIdleTimeoutSeconds: env.MNEMO_MODEL_IDLE_TIMEOUT_SECONDS,
    },
    jobsInProcess: env.MNEMO_JOBS !== "off",
    jobLanes: env.MNEMO_JOB_LANES,
    trustedProxies: env.MNEMO_TRUSTED_PROXIES,
    memory: {
      tokenBudget: env.MNEMO_MEMORY_TOKEN_BUDGET,
      feedbackGraceSeconds: env.MNEMO_FEEDBACK_GRACE_SECONDS,
      expireUnusedDays: env.MNEMO_MEMORY_EXPIRE_DAYS,
      mergeSimilarity: env.MNEMO_MEMORY_MERGE_SIMILARITY,
      attributionSimilarity: env.MNEMO_ATTRIBUTION_SIMILARITY,
      consolidation: {
        procedureRevalidateDays: env.MNEMO_PROCEDURE_REVALIDATE_DAYS,
        afterNewMemories: env.MNEMO_CONSOLIDATE_AFTER,
        lowValueDays: env.MNEMO_MEMORY_LOW_VALUE_DAYS,
      },
    },
    encryption: { key: env.MNEMO_ENCRYPTION_KEY, previousKey: env.MNEMO_ENCRYPTION_KEY_PREVIOUS },
    retention: { messageDays: env.MNEMO_MESSAGE_RETENTION_DAYS, temporaryChatHours: env.MNEMO_TEMPORARY_CHAT_HOURS },
    adminThreadAccess: env.MNEMO_ADMIN_THREAD_ACCESS !== "off",
    localEndpoints: (env.MNEMO_LOCAL_ENDPOINTS ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    import: { maxBytes: env.MNEMO_IMPORT_MAX_MB * 1024 * 1024, learnPerMinute: env.MNEMO_IMPORT_LEARN_PER_MINUTE },
    limits: { dailyMessages: env.MNEMO_DAILY_MESSAGE_LIMIT, dailyTokens: env.MNEMO_DAILY_TOKEN_LIMIT },
    registration: env.MNEMO_REGISTRATION ?? "open",
    mail,
  };
}

export type S3Config = {
  bucket: string;
  endpoint: string | null;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  prefix: string;
  forcePathStyle: boolean;
};

let cached: Config | undefined;
export function getConfig(): Config {
  if (!cached) {
    cached = loadConfig();
    // Auth.js and the proxy read the secret from the environment too.
    process.env.AUTH_SECRET = cached.authSecret;
  }
  return cached;
}
