// The production build, served as `npm start` serves it (scripts/server.mjs:
// Next.js behind a Node server that takes the client's address from the
// connection), as a child process a script can start,
// kill and restart, and HTTP sign-in through Auth.js's credentials endpoint.
// Used by the load benchmark and the fault suite.
import { spawn, type ChildProcess } from "node:child_process";

export type AppProcess = {
  base: string;
  start(): Promise<void>;
  /** SIGKILL: no shutdown hooks run, as in a crash or an OOM kill. */
  kill(): Promise<void>;
  stop(): Promise<void>;
  output(): string;
};

export function appProcess(port: number, env: NodeJS.ProcessEnv): AppProcess {
  const base = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let log = "";
  const exited = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode) return resolve();
      child.once("exit", () => resolve());
    });
  return {
    base,
    output: () => log,
    async start() {
      // A server left on the port would answer the health check for this one.
      if (
        await fetch(`${base}/api/health`)
          .then(() => true)
          .catch(() => false)
      )
        throw new Error(`port ${port} is already in use`);
      child = spawn(process.execPath, ["scripts/server.mjs", "-p", String(port), "-H", "127.0.0.1"], {
        env: { ...env, NODE_ENV: "production" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const keep = (b: Buffer) => (log = (log + b.toString()).slice(-200_000));
      child.stdout!.on("data", keep);
      child.stderr!.on("data", keep);
      for (let i = 0; i < 240; i++) {
        if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${log.slice(-2000)}`);
        if (
          await fetch(`${base}/api/health`)
            .then((r) => r.ok)
            .catch(() => false)
        )
          return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`the app did not become healthy in 60 s:\n${log.slice(-2000)}`);
    },
    async kill() {
      child?.kill("SIGKILL");
      await exited();
    },
    async stop() {
      child?.kill("SIGTERM");
      await exited();
    },
  };
}

/** Signs in with email and password; returns the Cookie header of the session. */
export async function signInOverHttp(base: string, email: string, password: string): Promise<string> {
  const csrfRes = await fetch(`${base}/api/auth/csrf`);
  const { csrfToken } = await csrfRes.json();
  const jar = csrfRes.headers.getSetCookie().map((c) => c.split(";")[0]);
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.join("; ") },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: base }),
  });
  const byName = new Map<string, string>();
  for (const c of [...jar, ...res.headers.getSetCookie().map((c) => c.split(";")[0])]) byName.set(c.split("=")[0], c);
  if (![...byName.keys()].some((k) => k.includes("session-token")))
    throw new Error(`sign-in failed for ${email} (${res.status})`);
  return [...byName.values()].join("; ");
}
