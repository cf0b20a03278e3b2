// What failed when a call to the model server fails, and where, in one classification for every caller: the web
// chat, `/v1`, Test connection and the background jobs. A refused connection to the model server is the model
// server's failure, never the database's (both are "connection refused" underneath), and the user is told at once
// which server could not be reached, with the administrator's next step for an administrator.
import OpenAI from "openai";

export type ModelFailureKind =
  | "refused"
  | "dns"
  | "tls"
  | "timeout"
  | "cut"
  | "unreachable"
  | "auth"
  | "not-found"
  | "rate-limit"
  | "server"
  | "context"
  | "refused-request";

export type ModelFailure = {
  kind: ModelFailureKind;
  /** host:port of the model server, as far as the call knew it. */
  where: string;
  status?: number;
  /** The sentence every user reads. */
  message: string;
  /** What an administrator can do about it (shown to administrators only). */
  adminHint?: string;
};

const CODES: Array<[RegExp, ModelFailureKind, string]> = [
  [/^ECONNREFUSED$/, "refused", "connection refused"],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME)$/, "dns", "its name does not resolve"],
  [/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_SSL/, "tls", "its TLS certificate was refused"],
  [/^(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT)$/, "timeout", "it did not answer in time"],
  [/^(ECONNRESET|EPIPE|UND_ERR_SOCKET|ERR_STREAM_PREMATURE_CLOSE)$/, "cut", "the connection was cut"],
  [/^(EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL)$/, "unreachable", "no route to it"],
];

/** The error codes along an error's causes (undici nests the socket's error under "fetch failed"). */
function codesOf(e: unknown): string[] {
  const out: string[] = [];
  for (let err = e as { code?: unknown; cause?: unknown; errors?: unknown } | undefined, i = 0; err && i < 6; i++) {
    if (typeof err.code === "string") out.push(err.code);
    // Several addresses tried (localhost: ::1 and 127.0.0.1): an AggregateError of each attempt's error.
    if (Array.isArray(err.errors))
      for (const x of err.errors) if (typeof (x as { code?: unknown })?.code === "string") out.push(x.code);
    err = err.cause as typeof err;
  }
  return out;
}

/** The messages along an error's causes. */
function messagesOf(e: unknown): string[] {
  const out: string[] = [];
  for (let err = e as { message?: unknown; cause?: unknown } | undefined, i = 0; err && i < 6; i++) {
    if (typeof err.message === "string") out.push(err.message);
    err = err.cause as typeof err;
  }
  return out;
}

/** host:port of a base URL (OpenAI's when none is set). */
export function serverAddress(baseURL: string | undefined): string {
  try {
    const u = new URL(baseURL ?? "https://api.openai.com/v1");
    return u.port ? `${u.hostname}:${u.port}` : u.hostname;
  } catch {
    return baseURL ?? "the model server";
  }
}

/** Which model server an error came from, noted where the call was made (the error itself does not say). */
const servers = new WeakMap<object, string | undefined>();

/** Notes that `e` came from the model server at `baseURL`, and rethrows it. */
export function fromModelServer(baseURL: string | undefined) {
  return (e: unknown): never => {
    if (e && typeof e === "object") servers.set(e, baseURL);
    throw e;
  };
}

const ADMIN_CHECK = "Check that it is running, and its address on Admin → Model settings.";

/**
 * The model server's failure in `e`, or null when `e` is not one (a database error, a bug): an error from the
 * `openai` SDK, or a stream the server cut ("terminated").
 */
export function classifyModelFailure(e: unknown, baseURL?: string): ModelFailure | null {
  const where = serverAddress(baseURL ?? (e && typeof e === "object" ? servers.get(e) : undefined));
  const unreachable = (kind: ModelFailureKind, why: string): ModelFailure => ({
    kind,
    where,
    message:
      kind === "cut"
        ? `The model server at ${where} cut the connection before the answer was complete. Retry to try again.`
        : `Mnemo could not reach the model server at ${where} (${why}). Try again in a moment.`,
    adminHint:
      kind === "tls" ? "Check the server's certificate, or its address on Admin → Model settings." : ADMIN_CHECK,
  });
  if (e instanceof OpenAI.APIConnectionTimeoutError) return unreachable("timeout", "it did not answer in time");
  if (e instanceof OpenAI.APIConnectionError || isStreamCut(e)) {
    const codes = codesOf(e);
    for (const [re, kind, why] of CODES) if (codes.some((c) => re.test(c))) return unreachable(kind, why);
    // fetch refuses some ports outright (9, 25, 6000…): nothing was even tried.
    if (messagesOf(e).some((m) => m === "bad port"))
      return unreachable("unreachable", "Node.js refuses to connect to that port; choose another");
    if (isStreamCut(e)) return unreachable("cut", "the connection was cut");
    return unreachable("unreachable", "the connection failed");
  }
  if (!(e instanceof OpenAI.APIError)) return null;
  const status = e.status;
  if (status === 401 || status === 403)
    return {
      kind: "auth",
      where,
      status,
      message: `The model server at ${where} refused Mnemo's API key (${status}).`,
      adminHint: "Set the right key on Admin → Model settings (or OPENAI_API_KEY).",
    };
  if (status === 404)
    return {
      kind: "not-found",
      where,
      status,
      message: `The model server at ${where} does not know this model or endpoint (404).`,
      adminHint: "Check the model names and the address (it usually ends in /v1) on Admin → Model settings.",
    };
  if (status === 429)
    return {
      kind: "rate-limit",
      where,
      status,
      message: `The model server at ${where} is rate-limiting requests (429). Try again shortly.`,
    };
  if (status && status >= 500)
    return {
      kind: "server",
      where,
      status,
      message: `The model server at ${where} failed (${status}). Try again.`,
      adminHint: "Its own log says why.",
    };
  return { kind: "refused-request", where, status, message: "" };
}

/** A stream the server closed part-way: undici's "terminated", or a premature close. */
function isStreamCut(e: unknown): boolean {
  const m = (e as { message?: unknown })?.message;
  return (
    (e instanceof TypeError && m === "terminated") ||
    codesOf(e).some((c) => /^(UND_ERR_SOCKET|ERR_STREAM_PREMATURE_CLOSE|ECONNRESET)$/.test(c))
  );
}

/** The sentence for a user (an administrator gets the next step too). */
export function modelFailureText(f: ModelFailure, forAdmin: boolean): string {
  return forAdmin && f.adminHint ? `${f.message} ${f.adminHint}` : f.message;
}
