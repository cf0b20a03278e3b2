// Route handlers under /v1 (the OpenAI-compatible API): authenticated by a personal API key (lib/keys/api-keys.ts),
// never by the browser session, and answering errors in OpenAI's shape ({error: {message, type, code}}) so every
// OpenAI client reports them as it would OpenAI's own.
import OpenAI from "openai";
import { z } from "zod";
import { AppError, publicError } from "@/lib/errors";
import { contextLimit, describeModelError } from "@/lib/llm/client";
import { classifyModelFailure } from "@/lib/llm/model-failure";

const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "invalid_request_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  429: "rate_limit_error",
};

export function v1Error(e: unknown, where: string): Response {
  const p =
    e instanceof z.ZodError
      ? { status: 400, message: `${e.issues[0].path.join(".") || "body"}: ${e.issues[0].message}`, ref: undefined }
      : (modelServerError(e) ?? publicError(e, where));
  return Response.json(
    {
      error: {
        message: p.message,
        type: TYPES[p.status] ?? "server_error",
        // An error OpenAI names by code (model_not_found) is named the same, so clients react as they do to OpenAI.
        code: e instanceof AppError ? (e.code ?? null) : null,
        ...(p.ref ? { ref: p.ref } : {}),
      },
    },
    { status: p.status, headers: { "cache-control": "no-store" } },
  );
}

export function v1Route<A extends unknown[]>(where: string, handler: (...args: A) => Promise<Response>) {
  return async (...args: A): Promise<Response> => {
    try {
      return await handler(...args);
    } catch (e) {
      return v1Error(e, where);
    }
  };
}

/**
 * The model server's refusal, said as the client can act on it: messages longer than the model reads are the
 * client's to shorten (400, as OpenAI answers), its rate limit is a 429, anything else a 502 (a server behind Mnemo).
 */
function modelServerError(e: unknown): { status: number; message: string; ref: undefined } | null {
  if (e instanceof OpenAI.APIUserAbortError) return null;
  // A refused connection, a cut stream: the model server's, 502 (never "something went wrong on Mnemo's side").
  const f = classifyModelFailure(e);
  if (f && !(e instanceof OpenAI.APIError && e.status)) return { status: 502, message: f.message, ref: undefined };
  if (!(e instanceof OpenAI.APIError)) return null;
  const limit = contextLimit(e);
  if (limit !== null) {
    const size = limit ? ` (${limit.toLocaleString("en")} tokens)` : "";
    return {
      status: 400,
      message: `The messages are longer than the model can read at once${size}: send fewer or shorter ones.`,
      ref: undefined,
    };
  }
  // A request the model server refused (400, 422: a parameter it does not take, a schema it cannot follow) is the
  // client's to change, said with the server's own words; its rate limit is a 429; anything else a 502.
  const status = e.status === 429 ? 429 : e.status === 400 || e.status === 422 ? 400 : 502;
  return { status, message: describeModelError(e), ref: undefined };
}
