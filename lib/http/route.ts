// Shared pieces for route handlers: same-origin checks for state-changing
// requests, JSON bodies cleaned by the text policy, and errors answered with
// the status and sentence from lib/errors.ts (never a stack or a query).
import { NextRequest } from "next/server";
import { AppError, publicError } from "@/lib/errors";
import { cleanDeep } from "@/lib/text/policy";

/**
 * Refuses requests a browser sent from another origin (another site, port or
 * subdomain). Browsers send Sec-Fetch-Site and Origin on every POST; clients
 * that send neither (scripts, the SDK) cannot carry a victim's cookies anyway.
 */
export function assertSameOrigin(request: Request): void {
  const site = request.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none")
    throw new AppError("Cross-site requests are not accepted.", 403);
  const origin = request.headers.get("origin");
  if (origin && origin !== "null") {
    const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      throw new AppError("Cross-site requests are not accepted.", 403);
    }
    if (host && originHost !== host) throw new AppError("Cross-site requests are not accepted.", 403);
  } else if (origin === "null") {
    throw new AppError("Cross-site requests are not accepted.", 403);
  }
}

/** The request's JSON body, cleaned; refuses other content types (forms cannot post JSON cross-site without CORS). */
export async function readJson(request: Request, maxBytes = 1_000_000): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type))
    throw new AppError("The request body must be JSON (Content-Type: application/json).", 415);
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > maxBytes) throw new AppError("The request is too large.", 413);
  const text = await readText(request, maxBytes);
  try {
    return cleanDeep(JSON.parse(text));
  } catch {
    throw new AppError("The request body must be JSON.", 400);
  }
}

/**
 * The request with its body read (only up to `maxBytes`), for a handler that would read it whole itself: Auth.js
 * reads a sign-in's body with `json()` or `text()`, unbounded, before any check, for anyone.
 */
export async function boundedRequest(request: NextRequest, maxBytes: number): Promise<NextRequest> {
  if (Number(request.headers.get("content-length") ?? 0) > maxBytes)
    throw new AppError("The request is too large.", 413);
  const body = await readText(request, maxBytes);
  return new NextRequest(request.url, { method: request.method, headers: request.headers, body });
}

/**
 * The body as text, read only up to `maxBytes`: a body sent without a length (chunked) is otherwise read whole
 * before its size is known, and an endless one holds the server's memory until it falls over.
 */
async function readText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let bytes = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AppError("The request is too large.", 413);
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * The body as bytes, read only up to `maxBytes` (past it, `tooLarge` is thrown and the rest is not read): an upload
 * is stored only once it arrived whole, so one cut off halfway leaves nothing behind.
 */
export async function readBytes(request: Request, maxBytes: number, tooLarge: (bytes: number) => Error) {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(bytes);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

export function errorResponse(e: unknown, where: string): Response {
  const p = publicError(e, where);
  return Response.json(
    { error: p.message, ...(p.ref ? { ref: p.ref } : {}) },
    { status: p.status, headers: { "cache-control": "no-store" } },
  );
}

/** Wraps a route handler so every error is answered in the one vocabulary. */
export function route<A extends unknown[]>(where: string, handler: (...args: A) => Promise<Response>) {
  return async (...args: A): Promise<Response> => {
    try {
      return await handler(...args);
    } catch (e) {
      return errorResponse(e, where);
    }
  };
}
