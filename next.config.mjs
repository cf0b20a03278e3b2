/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite (WebAssembly + data files) and the Prisma adapters must not be bundled.
  serverExternalPackages: ["@electric-sql/pglite", "pglite-prisma-adapter", "@prisma/adapter-pg", "pg"],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
