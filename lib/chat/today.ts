// The user's date, told to the model in every chat turn's system prompt. Without it a model answers "What did we
// talk about yesterday?" or "How long ago was that?" from its training data's idea of now, and cannot place the
// dates recall shows (a passage's day, the day a memory became true). The browser says its time zone with each turn;
// a client that does not is given the date in UTC. The date only, not the time: the system prompt opens every request,
// and a line that changed every minute would defeat a model server's cache of the prompt's unchanged start.
import { z } from "zod";
import { getConfig } from "@/lib/config";

/**
 * A formatter per time zone, made once: making one takes about 0.16 ms, on the turn's path before the model is asked.
 * Bounded (IANA lists about 600 zones), and null for a name Intl does not know.
 */
const formatters = new Map<string, Intl.DateTimeFormat | null>();
const MAX_ZONES = 1000;
function dayFormat(timeZone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(timeZone);
  if (f !== undefined) return f;
  try {
    f = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone });
  } catch {
    f = null;
  }
  if (formatters.size >= MAX_ZONES) formatters.clear();
  formatters.set(timeZone, f);
  return f;
}

/** An IANA time zone this server's Intl knows ("Europe/Berlin"); anything else is ignored (the date is then UTC's). */
export const timeZoneSchema = z
  .string()
  .max(64)
  .refine((tz) => dayFormat(tz) !== null)
  .optional()
  .catch(undefined);

/** "Today is Monday, 7 December 2026 (the user's time zone: Europe/Berlin)." */
export function todayLine(now: Date, timeZone?: string): string {
  const zoned = timeZone ? dayFormat(timeZone) : null;
  const day = (zoned ?? dayFormat("UTC")!).format(now);
  return zoned ? `Today is ${day} (the user's time zone: ${timeZone}).` : `Today is ${day} (UTC).`;
}

/** The configured system prompt with the user's date after it, in their time zone when known (else UTC). */
export const systemPromptFor = (timeZone?: string, now = new Date()) =>
  `${getConfig().chat.systemPrompt}\n\n${todayLine(now, timeZone)}`;
