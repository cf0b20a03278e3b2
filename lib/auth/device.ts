// A browser that has signed in to an account before carries a device cookie
// for it: a random nonce and an HMAC of (email, nonce) under AUTH_SECRET, so it
// cannot be made up and names no email. Sign-in throttling (lib/auth/
// signin-throttle.ts) exempts such a browser from the per-email ceiling that
// other people's wrong guesses raise: the owner is not locked out by them.
import crypto from "node:crypto";
import { getConfig } from "@/lib/config";

export const DEVICE_COOKIE = "mnemo-device";
export const DEVICE_COOKIE_MAX_AGE = 365 * 24 * 3600;

const mac = (email: string, nonce: string) =>
  crypto
    .createHmac("sha256", getConfig().authSecret)
    .update(`device:${email.trim().toLowerCase()}:${nonce}`)
    .digest("base64url");

/** A new device cookie value for this email. */
export function deviceToken(email: string): string {
  const nonce = crypto.randomBytes(16).toString("base64url");
  return `${nonce}.${mac(email, nonce)}`;
}

/** Whether a Cookie header carries a device cookie made for this email. */
export function isKnownDevice(cookieHeader: string | null | undefined, email: string): boolean {
  const value = cookieHeader
    ?.split(";")
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${DEVICE_COOKIE}=`))
    ?.slice(DEVICE_COOKIE.length + 1);
  const [nonce, given] = value?.split(".") ?? [];
  if (!nonce || !given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(mac(email, nonce));
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
