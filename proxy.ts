// Next.js 16 proxy (formerly middleware): signed-out visitors go to /signin.
// Pages, route handlers and server actions check the session themselves too.
// A path with a malformed % escape is answered 400 here: Next.js would fail
// decoding it in the page and answer 500. Every response gets the
// Content-Security-Policy with a fresh script nonce (lib/http/csp.ts); Next.js
// reads it from the request headers and puts it on its own scripts.
import NextAuth from "next-auth";
import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { authConfig } from "./auth.config";
import { contentSecurityPolicy, newNonce } from "./lib/http/csp";

const { auth } = NextAuth(authConfig);
const authProxy = auth as unknown as (req: NextRequest, ev: NextFetchEvent) => Promise<Response | undefined>;

export async function proxy(req: NextRequest, ev: NextFetchEvent) {
  try {
    decodeURIComponent(req.nextUrl.pathname);
  } catch {
    return new NextResponse("That link is malformed (a broken % escape). Check it and try again.", {
      status: 400,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
  if (isOAuthFallback(req)) return oauthNotOffered();
  const csp = contentSecurityPolicy(newNonce());
  const res = (await authProxy(req, ev)) ?? NextResponse.next();
  if (!res.headers.has("x-middleware-next")) {
    res.headers.set("content-security-policy", csp); // a redirect or a refusal
    return res;
  }
  // Going on to the page: hand the policy to Next.js as a request header, and
  // keep what Auth.js put on its response (the refreshed session cookie).
  const headers = new Headers(req.headers);
  headers.set("content-security-policy", csp);
  const next = NextResponse.next({ request: { headers } });
  for (const cookie of res.headers.getSetCookie()) next.headers.append("set-cookie", cookie);
  res.headers.forEach((value, key) => {
    if (key !== "set-cookie" && !key.startsWith("x-middleware-")) next.headers.set(key, value);
  });
  next.headers.set("content-security-policy", csp);
  return next;
}

/**
 * An MCP client refused a key tries OAuth, and with no metadata found falls back to registering itself at `/register`
 * and asking `/token` (RFC 8414's defaults): a JSON or form-encoded POST there is such a client (the sign-up page's
 * own posts are server actions: a `Next-Action` header, or multipart without JavaScript), answered in JSON with what
 * to do instead of the page's HTML.
 */
const OAUTH_FALLBACKS = new Set(["/register", "/token", "/authorize"]);
const isOAuthFallback = (req: NextRequest) =>
  req.method === "POST" &&
  OAUTH_FALLBACKS.has(req.nextUrl.pathname) &&
  !req.headers.get("next-action") &&
  !(req.headers.get("content-type") ?? "").startsWith("multipart/form-data");

function oauthNotOffered() {
  return NextResponse.json(
    {
      error: "invalid_client",
      error_description:
        "Mnemo authenticates MCP clients with personal API keys, not OAuth: the key sent was missing or not valid. " +
        "Make one under Settings → API keys and send it as Authorization: Bearer.",
    },
    { status: 400, headers: { "cache-control": "no-store" } },
  );
}

export const config = {
  // /v1 (the OpenAI-compatible API) and /mcp authenticate by API key, never by the browser session; the
  // .well-known paths (OAuth discovery by MCP clients) answer JSON to anyone.
  matcher: [
    "/((?!api/auth|api/import|api/attachments|v1/|mcp$|\\.well-known/|_next/static|_next/image|favicon.ico|icon.svg|robots.txt).*)",
  ],
};
