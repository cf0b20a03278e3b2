// GET /api/attachments/<id>: the file, to its owner only (in a shared project, to the members who may read its chat). A picture is served as the picture it was sniffed to be
// (PNG, JPEG, WebP, GIF: types a browser only displays); a document is a download, never rendered by the browser.
// ?as=text gives a document's extracted text as plain text. Every answer is `nosniff` and sandboxed, so nothing in a
// file can run as a page of Mnemo's. DELETE removes an attachment not yet sent (the composer's chip).
import { userContext } from "@/lib/user-context";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { NotFoundError } from "@/lib/errors";
import { assertSameOrigin, route } from "@/lib/http/route";
import { openAttachment, removeDraft } from "@/lib/attachments/store";
import { fileContext } from "@/lib/projects/access";
import { z } from "zod";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ id: string }> };
const idSchema = z.string().trim().min(1).max(64);

const SAFE_HEADERS = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  "cache-control": "private, no-store",
};

/** RFC 6266: an ASCII fallback and the UTF-8 name. */
function disposition(kind: "inline" | "attachment", name: string) {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export const GET = route("GET /api/attachments/{id}", async (request: Request, ctx: Ctx) => {
  const user = await requireUser();
  const id = idSchema.safeParse((await ctx.params).id);
  if (!id.success) throw new NotFoundError("item");
  const me = await userContext(await getDb(), user.id);
  // A file of a shared chat the user may read opens under the project's key (lib/projects/access.ts).
  const file = await openAttachment(await fileContext(me, id.data), id.data);
  if (new URL(request.url).searchParams.get("as") === "text") {
    if (file.text === null) throw new NotFoundError("item");
    return new Response(file.text.replaceAll("\f", "\n\n"), {
      headers: { ...SAFE_HEADERS, "content-type": "text/plain; charset=utf-8" },
    });
  }
  const image = file.kind === "image";
  return new Response(new Uint8Array(file.data), {
    headers: {
      ...SAFE_HEADERS,
      "content-type": image ? file.mime : "application/octet-stream",
      "content-disposition": disposition(image ? "inline" : "attachment", file.name),
      "content-length": String(file.data.length),
    },
  });
});

export const DELETE = route("DELETE /api/attachments/{id}", async (request: Request, ctx: Ctx) => {
  assertSameOrigin(request);
  const user = await requireUser();
  const id = idSchema.safeParse((await ctx.params).id);
  if (!id.success) throw new NotFoundError("item");
  const me = await userContext(await getDb(), user.id);
  await removeDraft(await fileContext(me, id.data), id.data);
  return new Response(null, { status: 204 });
});
