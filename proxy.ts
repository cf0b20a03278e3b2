// Next.js 16 proxy (formerly middleware): signed-out visitors go to /signin.
// Pages, route handlers and server actions check the session themselves too.
import NextAuth from "next-auth";
import { authConfig } from "./auth.config";

const { auth } = NextAuth(authConfig);
export { auth as proxy };

export const config = {
  matcher: ["/((?!api/auth|api/import|_next/static|_next/image|favicon.ico|icon.svg|robots.txt).*)"],
};
