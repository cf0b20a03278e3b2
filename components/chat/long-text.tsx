"use client";
import { useState } from "react";
import { Markdown } from "./markdown";

/**
 * How much of a message is rendered at first. An imported message can hold a whole pasted document (up to a million
 * characters): as Markdown that took 1.25 s per 100,000 characters in Chromium, so past this its start is shown and
 * the whole is one click away, as plain text (rendered in a moment whatever its length).
 */
export const SHOWN_CHARS = 20_000;

/** The text's start, cut at a paragraph break, a line break or a space when one is near, never inside a pair. */
export function startOf(text: string, max = SHOWN_CHARS): string {
  if (text.length <= max) return text;
  for (const [brk, near] of [
    ["\n\n", 0.5],
    ["\n", 0.5],
    [" ", 0.9],
  ] as const) {
    const at = text.lastIndexOf(brk, max);
    if (at > max * near) return text.slice(0, at);
  }
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * A message's text, as Markdown or plain, shown in part when it is very long. An answer still streaming is shown
 * whole, so what arrives stays in view.
 */
export function LongText({
  text,
  markdown = true,
  streaming = false,
}: {
  text: string;
  markdown?: boolean;
  streaming?: boolean;
}) {
  const [whole, setWhole] = useState(false);
  if (text.length <= SHOWN_CHARS || streaming) return markdown ? <Markdown text={text} /> : <>{text}</>;
  const toggle = (
    <button
      type="button"
      className="mt-2 block text-xs font-medium text-primary hover:underline"
      onClick={() => setWhole(!whole)}
      aria-expanded={whole}
      data-testid="long-text-toggle"
    >
      {whole
        ? "Show less"
        : `Show the whole message (${text.length.toLocaleString("en-US")} characters, as plain text)`}
    </button>
  );
  if (whole)
    return (
      <div data-testid="long-text" data-whole="true">
        <div className="whitespace-pre-wrap break-words text-sm">{text}</div>
        {toggle}
      </div>
    );
  const start = startOf(text);
  return (
    <div data-testid="long-text" data-whole="false">
      {markdown ? <Markdown text={`${start}\n\n…`} /> : <>{start} …</>}
      {toggle}
    </div>
  );
}
