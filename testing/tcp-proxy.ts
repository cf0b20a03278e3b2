// A TCP relay between the app and PostgreSQL that a check can cut: `down()`
// drops every open connection and refuses new ones (an outage), `up()` lets
// them through again, `restart()` drops them once (a database restart).
import net from "node:net";
import type { AddressInfo } from "node:net";

export type TcpProxy = { port: number; down(): void; up(): void; restart(): void; close(): Promise<void> };

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let open = true;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const dropAll = () => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    down() {
      open = false;
      dropAll();
    },
    up() {
      open = true;
    },
    restart: dropAll,
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
