// POST /api/chat/stop {itemId}: stops the user's answer that is being written.
// Ownership is checked in the database before anything in this process is
// touched (lib/chat/turn.ts stopTurn).
import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { requireUser } from "@/lib/auth/session";
import { stopTurn } from "@/lib/chat/turn";
import { AppError } from "@/lib/errors";
import { assertSameOrigin, readJson, route } from "@/lib/http/route";

const input = z.object({ itemId: z.string().trim().min(1).max(64) });

export const POST = route("POST /api/chat/stop", async (request: Request) => {
  assertSameOrigin(request);
  const user = await requireUser(); // the full session check: stopping is rare, not the hot path
  const parsed = input.safeParse(await readJson(request, 10_000));
  if (!parsed.success) throw new AppError("itemId is required.", 400);
  const stopped = await stopTurn(await getDb(), user.id, parsed.data.itemId);
  return Response.json({ stopped });
});
