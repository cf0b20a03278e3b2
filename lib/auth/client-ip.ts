// The client's address for rate limiting. Each reverse proxy appends the
// address it received the request from to X-Forwarded-For, so behind
// MNEMO_TRUSTED_PROXIES proxies the client is that many entries from the right;
// anything further left was written by the client and is not trusted.
// With no trusted proxy (the default), Next.js fills X-Forwarded-For with the
// connection's address only when the client sent none: a client that sends
// its own can choose its address, so deployments reachable from the internet
// should sit behind a proxy and set MNEMO_TRUSTED_PROXIES (docs/operations.md).
import { getConfig } from "@/lib/config";

export function clientIp(
  headers: Headers | Record<string, string | string[] | undefined>,
  trusted = getConfig().trustedProxies,
): string {
  const get = (name: string) =>
    headers instanceof Headers
      ? headers.get(name)
      : ([] as Array<string | undefined>).concat(headers[name]).filter(Boolean).join(",");
  const chain = (get("x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (trusted > 0) return chain[Math.max(0, chain.length - trusted)] ?? "unknown";
  return chain[0] || "unknown";
}
