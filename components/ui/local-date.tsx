"use client";
// One date format everywhere: the browser's locale and time zone ("27 Nov 2026", "Nov 27, 2026", "27.11.2026"...),
// medium style, with the time when it matters. The server does not know the reader's locale, so the server render
// (and hydration) shows the date in UTC, and the browser's own format takes over right after.
import { useSyncExternalStore } from "react";

const noSubscription = () => () => {};

/** False while rendering on the server and hydrating, then true. */
export function useInBrowser(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

export function formatDate(
  value: string | Date,
  opts: { time?: boolean; locale?: string; timeZone?: string } = {},
): string {
  const style: Intl.DateTimeFormatOptions = { dateStyle: "medium", ...(opts.time ? { timeStyle: "short" } : {}) };
  return new Intl.DateTimeFormat(opts.locale, { ...style, timeZone: opts.timeZone }).format(new Date(value));
}

export function LocalDate({ value, time = false }: { value: string | Date; time?: boolean }) {
  const inBrowser = useInBrowser();
  const d = new Date(value);
  const text = inBrowser
    ? formatDate(d, { time })
    : `${formatDate(d, { time, locale: "en-GB", timeZone: "UTC" })}${time ? " UTC" : ""}`;
  return (
    <time dateTime={d.toISOString()} suppressHydrationWarning>
      {text}
    </time>
  );
}
