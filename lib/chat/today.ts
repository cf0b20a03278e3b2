// The user's date, told to the model in every chat turn's system prompt. Without it a model answers "What did we
// talk about yesterday?" or "How long ago was that?" from its training data's idea of now, and cannot place the
// dates recall shows (a passage's day, the day a memory became true). The browser says its time zone with each turn;
// a client that does not is given the date in UTC. The date only, not the time: the system prompt opens every request,
// and a line that changed every minute would defeat a model server's cache of the prompt's unchanged start.
import { z } from "zod";

/** An IANA time zone this server's Intl knows ("Europe/Berlin"); anything else is ignored (the date is then UTC's). */
export const timeZoneSchema = z
  .string()
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat("en", { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  })
  .optional()
  .catch(undefined);

/** "Today is Monday, 7 December 2026 (the user's time zone: Europe/Berlin)." */
export function todayLine(now: Date, timeZone?: string): string {
  const zone = timeZone ?? "UTC";
  const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone: zone }).format(now);
  return timeZone ? `Today is ${day} (the user's time zone: ${zone}).` : `Today is ${day} (UTC).`;
}

/** The configured system prompt with the user's date after it. */
export const withToday = (systemPrompt: string, now: Date, timeZone?: string) =>
  `${systemPrompt}\n\n${todayLine(now, timeZone)}`;
