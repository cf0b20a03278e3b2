// The production server `npm start` runs: Next.js's request handler behind a
// plain Node HTTP server, so the client's address comes from the connection.
// With MNEMO_TRUSTED_PROXIES=0 (Mnemo reached directly) any X-Forwarded-For the
// client sent is replaced by the socket's address, so a client cannot choose its
// address for the sign-in, registration and reset limits. With N trusted proxies
// the header is left as the proxies wrote it (each appends the address it
// received from), and lib/auth/client-ip.ts reads the client N entries from the right.
// Usage: node scripts/server.mjs [-p PORT] [-H HOST]
import http from "node:http";
import next from "next";

const args = process.argv.slice(2);
const opt = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : fallback;
};
const port = Number(opt("-p", process.env.PORT ?? "3000"));
const hostname = opt("-H", undefined);
const trusted = Number(process.env.MNEMO_TRUSTED_PROXIES?.trim() || 0);

// What `next start` records once it listens, read by the app at startup (lib/ops/endpoint.ts).
process.env.PORT = String(port);
process.env.__NEXT_PRIVATE_ORIGIN = `http://${hostname ?? "localhost"}:${port}`;
const app = next({ dev: false, dir: process.cwd(), port, hostname: hostname ?? "localhost" });
const handle = app.getRequestHandler();

const server = http.createServer((req, res) => {
  if (trusted === 0) req.headers["x-forwarded-for"] = req.socket.remoteAddress ?? "unknown";
  handle(req, res);
});

await app.prepare();
server.listen(port, hostname, () => console.log(`[mnemo] serving on http://${hostname ?? "localhost"}:${port}`));
// Answers being written are marked interrupted by the sweeper of the next instance (lib/chat/leases.ts).
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
