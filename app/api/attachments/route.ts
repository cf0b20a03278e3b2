// POST /api/attachments?name=<file name>[&threadId=…|&projectId=…]: one file for the composer, for that chat or that
// project's new chat (in a shared project it is the project account's, sealed with its key, the uploader's draft).
// Sent as the raw request body (the browser's upload progress works on it, and no multipart parser holds it). Read only up to the size limit; checked, sniffed,
// its text read, sealed and stored as a draft, then answered with what the chip shows. Nothing is stored unless the
// whole file arrived. The proxy does not see this path (it would buffer the body); the session is checked here.
import { userContext } from "@/lib/user-context";
import { writeContext } from "@/lib/projects/access";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { attachmentLimits } from "@/lib/attachments/limits";
import { AppError } from "@/lib/errors";
import { assertSameOrigin, readBytes, route } from "@/lib/http/route";
import { assertFileSize, displayName, saveUpload } from "@/lib/attachments/store";
import { z } from "zod";

export const dynamic = "force-dynamic";

const nameSchema = z.string({ error: "Name the file (?name=…)." }).min(1, "Name the file (?name=…).").max(1000);
const placeSchema = z.object({
  threadId: z.string().trim().min(1).max(64).optional(),
  projectId: z.string().trim().min(1).max(64).optional(),
});

export const POST = route("POST /api/attachments", async (request: Request) => {
  assertSameOrigin(request);
  const user = await requireUser();
  const params = new URL(request.url).searchParams;
  const name = displayName(nameSchema.parse(params.get("name") ?? undefined));
  const place = placeSchema.parse({
    threadId: params.get("threadId") ?? undefined,
    projectId: params.get("projectId") ?? undefined,
  });
  const db = await getDb();
  const max = (await attachmentLimits(db)).maxFileBytes;
  assertFileSize(Number(request.headers.get("content-length") ?? 0), max, `“${name}”`);
  const bytes = await readBytes(request, max, (n) => {
    try {
      assertFileSize(n, max, `“${name}”`);
    } catch (e) {
      return e as Error;
    }
    return new AppError("The file is too large.", 413);
  });
  // Where it will be sent decides whose draft it is: a chat the user may continue, or a project they may write in.
  const u = await writeContext(await userContext(db, user.id), place);
  const meta = await saveUpload(u, name, bytes);
  return Response.json(meta, { status: 201, headers: { "cache-control": "no-store" } });
});
