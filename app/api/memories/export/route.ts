// GET /api/memories/export?format=json|markdown: the signed-in user's memories on their own.
import { z } from "zod";
import { userContext } from "@/lib/user-context";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { route } from "@/lib/http/route";
import { memoriesJson, memoriesMarkdown } from "@/lib/memory/portable";

export const dynamic = "force-dynamic";
const formatSchema = z.enum(["json", "markdown"]).default("json");

export const GET = route("GET /api/memories/export", async (request: Request) => {
  const user = await requireUser();
  const format = formatSchema.safeParse(new URL(request.url).searchParams.get("format") ?? undefined);
  if (!format.success) return Response.json({ error: "format must be json or markdown." }, { status: 400 });
  const db = await getDb();
  const date = new Date().toISOString().slice(0, 10);
  if (format.data === "markdown") {
    return new Response(await memoriesMarkdown(await userContext(db, user.id)), {
      headers: {
        "Content-Type": "text/markdown; charset=utf-8",
        "Content-Disposition": `attachment; filename="mnemo-memories-${date}.md"`,
        "Cache-Control": "no-store",
      },
    });
  }
  return new Response(JSON.stringify(await memoriesJson(await userContext(db, user.id)), null, 2), {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="mnemo-memories-${date}.json"`,
      "Cache-Control": "no-store",
    },
  });
});
