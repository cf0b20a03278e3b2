// POST /api/chat/stop {itemId}: stops the user's answer that is being written.
import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { jwtUser } from "@/lib/auth/jwt-session";
import { stopTurn } from "@/lib/chat/turn";

const input = z.object({ itemId: z.string().trim().min(1).max(64) });

export async function POST(request: Request) {
  const user = await jwtUser();
  if (!user) return Response.json({ error: "Sign in first." }, { status: 401 });
  const parsed = input.safeParse(await request.json().catch(() => null));
  if (!parsed.success) return Response.json({ error: "itemId is required." }, { status: 400 });
  const stopped = await stopTurn(await getDb(), user.id, parsed.data.itemId);
  return Response.json({ stopped });
}
