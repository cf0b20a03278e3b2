// Server-sent events for /v1's streams (chat completions, responses): each event framed as the client expects, the
// error that ends a stream already started written into it (as OpenAI's are), and a client that goes away stopping
// the generator (what was written is stored).

/** How one stream frames its events: `data: …` lines, or `event: type` with `data: …`. */
export type SseFormat<T> = {
  frame: (event: T) => string;
  /** Sent after the last event (chat completions' `data: [DONE]`). */
  done?: string;
  /** The frame of an error thrown once the stream has started. */
  error: (e: unknown) => Promise<string>;
};

export const sseData = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
export const sseEvent = (type: string, data: unknown) => `event: ${type}\n${sseData(data)}`;

export function sseResponse<T>(events: AsyncGenerator<T>, format: SseFormat<T>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    async start(controller) {
      const send = (frame: string) => controller.enqueue(encoder.encode(frame));
      try {
        for await (const e of events) send(format.frame(e));
        if (format.done) send(format.done);
      } catch (e) {
        send(await format.error(e));
      } finally {
        controller.close();
      }
    },
    async cancel() {
      await events.return(undefined as never);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
    },
  });
}
