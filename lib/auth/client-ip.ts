// The client's address for rate limiting. Behind a reverse proxy, the first
// x-forwarded-for entry is the client (the proxy must set it); Next.js sets it
// for direct connections too.
export function clientIp(headers: Headers | Record<string, string | string[] | undefined>): string {
  const get = (name: string) =>
    headers instanceof Headers ? headers.get(name) : ([] as Array<string | undefined>).concat(headers[name])[0];
  const fwd = get("x-forwarded-for")?.split(",")[0]?.trim();
  return fwd || get("x-real-ip")?.trim() || "unknown";
}
