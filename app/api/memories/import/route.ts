// POST /api/memories/import: the signed-in user's memories from a Mnemo memories
// JSON file (at most 5 MB, 5,000 entries), all or nothing (lib/memory/portable.ts).
// A route handler, not a server action: server action bodies are capped at 1 MB.
import { embedSoon } from "@/lib/memory/embed";
import { userContext } from "@/lib/user-context";
import { revalidatePath } from "next/cache";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { assertSameOrigin, readJson, route } from "@/lib/http/route";
import { importMemories } from "@/lib/memory/portable";

const MAX_IMPORT_BYTES = 5_000_000;

export const POST = route("POST /api/memories/import", async (request: Request) => {
  assertSameOrigin(request);
  const user = await requireUser();
  const json = await readJson(request, MAX_IMPORT_BYTES).catch((e) => {
    if (e instanceof AppError && e.status === 413) throw new AppError("That file is too large (at most 5 MB).", 413);
    if (e instanceof AppError && e.status === 400)
      throw new AppError("That file is not JSON. Choose a memories file exported from Mnemo (.json).", 400);
    throw e;
  });
  const db = await getDb();
  const data = await importMemories(await userContext(db, user.id), json);
  await embedSoon(db, user.id);
  revalidatePath("/settings/memory");
  return Response.json(data);
});
