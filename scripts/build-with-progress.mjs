// Runs `next build` and says every 20 s that it is still working: a first build on a small machine takes minutes,
// most of them in a compile step that prints nothing.
import { spawn } from "node:child_process";

const started = Date.now();
const elapsed = () => {
  const s = Math.round((Date.now() - started) / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
};
const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "build"], {
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
const tick = setInterval(() => console.log(`[mnemo] still building… ${elapsed()}`), 20_000);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => {
  clearInterval(tick);
  console.log(code === 0 ? `[mnemo] built in ${elapsed()}` : `[mnemo] the build failed after ${elapsed()}`);
  process.exit(code ?? 1);
});
