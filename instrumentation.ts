// Next.js calls register() once per server process before serving requests.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startupOrExit } = await import("./lib/startup");
    await startupOrExit();
    const { startBackground } = await import("./lib/background");
    startBackground();
    // On the embedded database, operator scripts started beside the app send their commands here.
    const { announceOps } = await import("./lib/ops/endpoint");
    announceOps();
  }
}
