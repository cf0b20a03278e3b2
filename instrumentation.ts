// Next.js calls register() once per server process before serving requests.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startupOrExit } = await import("./lib/startup");
    await startupOrExit();
    const { startBackground } = await import("./lib/background");
    startBackground();
  }
}
