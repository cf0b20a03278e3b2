// POST /api/chat/stop {itemId}: stops the user's answer that is being written.
// Ownership is checked in the database before anything in this process is
// touched (lib/chat/turn.ts stopTurn).
import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { jwtUser } from "@/lib/auth/jwt-session";
import { stopTurn } from "@/lib/chat/turn";
import { UnauthorizedError } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { assertSameOrigin, readJson, route } from "@/lib/http/route";

const input = z.object({ itemId: z.string().trim().min(1).max(64) });

export const POST = route("POST /api/chat/stop", async (request: Request) => {
  assertSameOrigin(request);
  const user = await jwtUser();
  if (!user) throw new UnauthorizedError();
  const parsed = input.safeParse(await readJson(request, 10_000));
  if (!parsed.success) throw new AppError("itemId is required.", 400);
  const stopped = await stopTurn(await getDb(), user.id, parsed.data.itemId);
  return Response.json({ stopped });
});
