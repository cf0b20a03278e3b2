// GET /api/export: everything of the signed-in user's, as one JSON document,
// streamed (rows are read page by page; nothing large is held in memory).
// X-Export-Rows says how many rows follow, one per line, for a progress bar.
import { requireUser } from "@/lib/auth/session";
import { userContext } from "@/lib/user-context";
import { getDb } from "@/lib/db/client";
import { route } from "@/lib/http/route";
import { exportRowCount, exportUserData } from "@/lib/account/export";

export const dynamic = "force-dynamic";

export const GET = route("GET /api/export", async () => {
  const user = await requireUser();
  const db = await getDb();
  const rows = await exportRowCount(db, user.id);
  const chunks = exportUserData(await userContext(db, user.id));
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(encoder.encode(value));
      } catch (e) {
        // A failure mid-stream leaves invalid JSON, so the download visibly fails.
        console.error("[mnemo] export failed:", e);
        controller.error(e);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  const date = new Date().toISOString().slice(0, 10);
  return new Response(body, {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="mnemo-export-${date}.json"`,
      "Cache-Control": "no-store",
      "X-Export-Rows": String(rows),
    },
  });
});
