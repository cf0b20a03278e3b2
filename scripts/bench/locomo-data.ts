// Reading LoCoMo's original JSON (sessions of turns with ids such as D3:5, questions with evidence ids), shared by
// `bench:recall` and `eval:locomo`.
import fs from "node:fs";
import path from "node:path";

export type LocomoTurn = { speaker: string; dia_id: string; text: string; blip_caption?: string };
export type LocomoQuestion = { question: string; answer?: unknown; evidence: string[]; category: number };
export type LocomoConversation = Record<string, unknown> & { qa: LocomoQuestion[] };

/** The .json files named, or found in the folders named (sorted). */
export function locomoFiles(args: string[]): string[] {
  const out: string[] = [];
  for (const a of args.length ? args : ["../shared/datasets/locomo/dev"]) {
    const st = fs.statSync(a);
    if (st.isDirectory())
      out.push(
        ...fs
          .readdirSync(a)
          .filter((f) => f.endsWith(".json"))
          .sort()
          .map((f) => path.join(a, f)),
      );
    else out.push(a);
  }
  return out;
}

/** LoCoMo files are either the original [{conversation, qa, observation}] list or one flat object. */
export function locomoConversations(file: string): LocomoConversation[] {
  const raw = JSON.parse(fs.readFileSync(file, "utf8"));
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((c) => ({ ...(c.conversation ?? {}), ...(c.observation ?? {}), ...c }));
}

/** "1:56 pm on 8 May, 2023" → that time, UTC. */
export function parseLocomoDate(s: string | undefined): Date {
  const m = s?.match(/(\d+):(\d+)\s*(am|pm)\s+on\s+(\d+)\s+(\w+),?\s+(\d{4})/i);
  if (!m) return new Date("2023-01-01T00:00:00Z");
  let h = Number(m[1]) % 12;
  if (m[3].toLowerCase() === "pm") h += 12;
  return new Date(`${m[5]} ${m[4]}, ${m[6]} ${String(h).padStart(2, "0")}:${m[2]}:00 UTC`);
}

/** The session numbers of a conversation, in order. */
export function locomoSessions(conv: LocomoConversation): number[] {
  return Object.keys(conv)
    .map((k) => k.match(/^session_(\d+)$/)?.[1])
    .filter((n): n is string => !!n && Array.isArray(conv[`session_${n}`]))
    .map(Number)
    .sort((a, b) => a - b);
}

/** The conversation's two speakers, first and second. */
export function locomoSpeakers(conv: LocomoConversation): [string, string] {
  return [String(conv.speaker_a ?? "A"), String(conv.speaker_b ?? "B")];
}

/**
 * One session's turns as chat messages: one speaker is the user (the first, unless another is named), the other
 * the assistant.
 */
export function locomoMessages(conv: LocomoConversation, session: number, user = locomoSpeakers(conv)[0]) {
  const turns = conv[`session_${session}`] as LocomoTurn[];
  return turns.map((turn) => ({
    role: turn.speaker === user ? ("user" as const) : ("assistant" as const),
    content: `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [shares a photo: ${turn.blip_caption}]` : ""}`,
    sourceRef: turn.dia_id,
  }));
}
