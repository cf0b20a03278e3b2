// Next.js 16 proxy (formerly middleware): signed-out visitors go to /signin.
// Pages, route handlers and server actions check the session themselves too.
// A path with a malformed % escape is answered 400 here: Next.js would fail
// decoding it in the page and answer 500.
import NextAuth from "next-auth";
import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { authConfig } from "./auth.config";

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
  return authProxy(req, ev);
}

export const config = {
  matcher: ["/((?!api/auth|api/import|_next/static|_next/image|favicon.ico|icon.svg|robots.txt).*)"],
};
