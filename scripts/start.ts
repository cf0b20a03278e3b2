// `npm start`: the local launcher. Builds when the sources changed, provides a
// generated AUTH_SECRET on the embedded database (kept in ./data, logged), and
// serves the production build on PORT (3000) through scripts/server.mjs (the
// client's address from the connection). The app applies the embedded
// database's migrations itself at startup; on PostgreSQL run `npm run db:migrate`.
import { spawn } from "node:child_process";
import { localAuthSecret } from "../lib/config";
import { dataDirFromEnv } from "../lib/db/engine";
import { buildIfStale } from "./build-state";

// Next.js's telemetry notice is not for the person starting Mnemo (and nothing may be sent from here anyway).
const env: NodeJS.ProcessEnv = { NEXT_TELEMETRY_DISABLED: "1", ...process.env };
if (!env.AUTH_SECRET && !env.DATABASE_URL) {
  env.AUTH_SECRET = localAuthSecret(dataDirFromEnv(env)).secret;
}
buildIfStale();
const port = env.PORT ?? "3000";
const child = spawn(process.execPath, ["scripts/server.mjs", "-p", port, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...env, NODE_ENV: "production" },
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
