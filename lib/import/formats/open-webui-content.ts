// Open WebUI stores an answer's reasoning, tool calls and code runs inside its text, as HTML <details> blocks
// (backend/open_webui/utils/middleware.py, serialize_output / serialize_content_blocks):
//   <details type="reasoning" done="true" duration="3"><summary>Thought for 3 seconds</summary>> …</details>
//   <details type="tool_calls" done="true" id="…" name="get_weather" arguments="&quot;{…}&quot;" result="…">…</details>
//   <details type="code_interpreter" done="true" output="{&quot;stdout&quot;: …}"><summary>Analyzed</summary>```py …```</details>
// Older versions wrote tool_calls with `content` (the calls) and `results` attributes instead. Models whose
// reasoning was not parsed leave raw <think>…</think> in the text. Reasoning is left out (as ChatGPT's thoughts
// are); tool calls and code runs become tool notes; the rest is the answer's text.
import { text, toolNote, type MessagePart } from "../conversation";

const BLOCK = /<details\b([^>]*)>([\s\S]*?)<\/details>/gi;
const ATTR = /([a-zA-Z_:-]+)\s*=\s*"([^"]*)"/g;
const RAW_REASONING =
  /<(think|thinking|reason|reasoning|thought)>[\s\S]*?(?:<\/\1>|$)|\|begin_of_thought\|[\s\S]*?(?:\|end_of_thought\||$)/gi;

const ENTITIES: Record<string, string> = { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'", nbsp: " " };

/** HTML attribute text as written before Python's html.escape. */
export function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

function attributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of raw.matchAll(ATTR)) out[m[1].toLowerCase()] = unescapeHtml(m[2]);
  return out;
}

/** Open WebUI json.dumps its attributes: a JSON string becomes its text, anything else stays JSON. */
function jsonText(v: string | undefined): string {
  if (v === undefined || v === "") return "";
  try {
    const parsed: unknown = JSON.parse(v);
    return typeof parsed === "string" ? parsed : JSON.stringify(parsed);
  } catch {
    return v;
  }
}

/** The block's inner text without its <summary>. */
const inner = (body: string) => body.replace(/<summary>[\s\S]*?<\/summary>/i, "").trim();

function toolParts(a: Record<string, string>, body: string): MessagePart[] {
  // Older layout: content='[{"id", "function": {"name", "arguments"}}]', results='[{"tool_call_id", "content"}]'.
  if (a.content && !a.name) {
    try {
      const calls = JSON.parse(a.content) as Array<{ id?: string; function?: { name?: string; arguments?: unknown } }>;
      const results = a.results ? (JSON.parse(a.results) as Array<{ tool_call_id?: string; content?: unknown }>) : [];
      if (Array.isArray(calls))
        return calls.map((c) => {
          const r = results.find((x) => x.tool_call_id && x.tool_call_id === c.id);
          const args = c.function?.arguments;
          const res = r?.content;
          return {
            role: "tool" as const,
            toolName: (c.function?.name ?? "tool").slice(0, 64),
            content: toolNote(
              typeof args === "string" ? args : JSON.stringify(args ?? ""),
              res === undefined ? null : typeof res === "string" ? res : JSON.stringify(res),
            ),
          };
        });
    } catch {
      // fall through to the newer layout
    }
  }
  const result = a.result !== undefined ? jsonText(a.result) : inner(body) || null;
  return [
    { role: "tool", toolName: (a.name || "tool").slice(0, 64), content: toolNote(jsonText(a.arguments), result) },
  ];
}

function codeParts(a: Record<string, string>, body: string): MessagePart[] {
  let output: string | null = null;
  if (a.output) {
    try {
      const o = JSON.parse(a.output) as Record<string, unknown>;
      output = ["stdout", "stderr", "result"]
        .map((k) => (typeof o[k] === "string" ? (o[k] as string).trim() : ""))
        .filter(Boolean)
        .join("\n");
    } catch {
      output = a.output;
    }
  }
  return [{ role: "tool", toolName: "code_interpreter", content: toolNote(unescapeHtml(inner(body)), output) }];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const texts = (list: unknown) =>
  (Array.isArray(list) ? list : [])
    .map((p) => (typeof obj(p).text === "string" ? (obj(p).text as string) : ""))
    .join("");

/**
 * Newer versions also keep the answer as Responses-style `output` items (the HTML is rendered from them): the same
 * parts, without parsing HTML. Reasoning items are left out; a function_call is joined with its output by call_id.
 */
export function openWebUiOutputParts(output: unknown[]): MessagePart[] {
  const items = output.map(obj);
  const results = new Map(items.filter((i) => i.type === "function_call_output").map((i) => [i.call_id, i]));
  const parts: MessagePart[] = [];
  for (const item of items) {
    if (item.type === "message") parts.push({ role: "assistant", content: texts(item.content) });
    else if (item.type === "function_call") {
      const r = results.get(item.call_id);
      const args = typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? "");
      parts.push({
        role: "tool",
        toolName: (typeof item.name === "string" && item.name ? item.name : "tool").slice(0, 64),
        content: toolNote(args, r ? texts(r.output) : null),
      });
    } else if (item.type === "open_webui:code_interpreter") {
      const out = item.output;
      const result = typeof out === "string" ? out : out && typeof out === "object" ? JSON.stringify(out) : null;
      parts.push({ role: "tool", toolName: "code_interpreter", content: toolNote(String(item.code ?? ""), result) });
    }
  }
  return parts;
}

/** An Open WebUI answer as its parts, in order: text, tool notes, text… (reasoning left out). */
export function openWebUiParts(content: string): MessagePart[] {
  const parts: MessagePart[] = [];
  const say = (s: string) => {
    const t = text(s.replace(RAW_REASONING, "")).trim();
    if (t) parts.push({ role: "assistant", content: t });
  };
  let at = 0;
  for (const m of content.matchAll(BLOCK)) {
    const a = attributes(m[1]);
    const type = (a.type ?? "").toLowerCase();
    if (!type) continue; // a <details> the answer itself wrote: it stays text
    say(content.slice(at, m.index));
    at = m.index! + m[0].length;
    if (type === "reasoning") continue;
    if (type === "tool_calls") parts.push(...toolParts(a, m[2]));
    else if (type === "code_interpreter") parts.push(...codeParts(a, m[2]));
    else say(unescapeHtml(inner(m[2]))); // another kind of block: its words, without the HTML
  }
  say(content.slice(at));
  return parts;
}
