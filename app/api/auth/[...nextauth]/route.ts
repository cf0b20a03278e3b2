// Auth.js's routes (sign-in, sign-out, session). A POST's body is read here, bounded, before Auth.js sees it: it
// reads bodies whole, before any check, and anyone may post to these routes.
import type { NextRequest } from "next/server";
import { handlers } from "@/auth";
import { boundedRequest, route } from "@/lib/http/route";

/** A sign-in form (email, password, CSRF token, callback URL) is well under this. */
const AUTH_BODY_BYTES = 64 * 1024;

export const { GET } = handlers;
export const POST = route("POST /api/auth", async (request: NextRequest) =>
  handlers.POST(await boundedRequest(request, AUTH_BODY_BYTES)),
);
