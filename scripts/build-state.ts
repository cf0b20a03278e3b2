// Is the production build (.next) older than the sources? Used by `npm start`
// and `npm test` so a fresh clone builds once and later runs reuse the build.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";

const SOURCES = [
  "app",
  "components",
  "lib",
  "public",
  "auth.ts",
  "auth.config.ts",
  "proxy.ts",
  "instrumentation.ts",
  "next.config.mjs",
  "postcss.config.mjs",
  "package-lock.json",
  "prisma/schema.prisma",
];

function newestMtime(p: string): number {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of fs.readdirSync(p)) {
    if (p === "lib" && e === "generated") continue;
    max = Math.max(max, newestMtime(path.join(p, e)));
  }
  return max;
}

export function buildIsStale(): boolean {
  const id = ".next/BUILD_ID";
  if (!fs.existsSync(id)) return true;
  const built = fs.statSync(id).mtimeMs;
  return SOURCES.some((s) => newestMtime(s) > built);
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const r = spawnSync(cmd, args, { stdio: "inherit", env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

export function buildIfStale(): void {
  if (!fs.existsSync("lib/generated/prisma/client.ts")) run(process.execPath, ["scripts/prisma.mjs", "generate"]);
  if (buildIsStale()) {
    console.log(
      fs.existsSync(".next/BUILD_ID")
        ? "[mnemo] the sources changed: building the app again (next build, 1–4 minutes)…"
        : "[mnemo] first start: building the app (next build). This takes 2–4 minutes on a laptop, once; " +
            "later starts reuse the build.",
    );
    run(process.execPath, ["scripts/build-with-progress.mjs"]);
  }
}
