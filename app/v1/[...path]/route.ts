// Any other /v1 path: OpenAI's JSON error shape with 404, so a client shows a sentence, never an HTML page.
import { v1Route } from "@/lib/api/v1-route";
import { AppError } from "@/lib/errors";

export const dynamic = "force-dynamic";

const notFound = v1Route("v1 unknown path", async (request: Request) => {
  const path = new URL(request.url).pathname;
  throw new AppError(`Mnemo does not serve ${request.method} ${path}. See /v1/models for what it answers with.`, 404);
});

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
