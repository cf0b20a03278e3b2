// How often learning's grounding check (lib/memory/grounding.ts) holds back real memories, and how often it lets an
// unrelated one through. LoCoMo's annotated observations are memories people wrote from a turn: each is checked
// against the turn it cites (should pass), and against a turn of another session of the same conversation and one of
// another conversation, drawn with a fixed seed (a memory that turn never said: should be held). The speaker's name is taken out of the
// observation first (Mnemo's memories do not name their user).
//   npm run bench:grounding -- ../shared/datasets/locomo/dev
import { groundedIn } from "@/lib/memory/grounding";
import { locomoConversations, locomoFiles, locomoSessions, type LocomoTurn } from "./locomo-data";

type Observation = [string, string | string[]];

/** A small deterministic generator, so every run draws the same unrelated turns. */
function seeded(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function main() {
  const random = seeded(27);
  let pairs = 0;
  let heldBack = 0;
  let unrelatedPassed = 0;
  let strangerPassed = 0;
  const examples: string[] = [];
  const conversations = locomoFiles(process.argv.slice(2)).flatMap((f) => locomoConversations(f));
  // Every turn of every conversation, for the turns of other people.
  const everyTurn = conversations.map((conv) =>
    locomoSessions(conv).flatMap((s) => (conv[`session_${s}`] as LocomoTurn[]).map((t) => t.text)),
  );
  for (const [c, conv] of conversations.entries()) {
    const turns = new Map<string, { text: string; session: number }>();
    const sessions = locomoSessions(conv);
    for (const s of sessions)
      for (const t of conv[`session_${s}`] as LocomoTurn[]) turns.set(t.dia_id, { text: t.text, session: s });
    const all = [...turns.values()];
    for (const s of sessions) {
      const observed = (conv[`session_${s}_observation`] ?? {}) as Record<string, Observation[]>;
      for (const [speaker, list] of Object.entries(observed))
        for (const [text, evidence] of list) {
          const ids = (Array.isArray(evidence) ? evidence : [evidence])
            .flatMap((e) => String(e).split(/[;,\s]+/))
            .filter((id) => turns.has(id));
          if (!ids.length) continue;
          const memory = text.replaceAll(speaker, " ");
          const said = ids.map((id) => turns.get(id)!.text).join(" ");
          pairs++;
          if (!groundedIn(said, memory)) {
            heldBack++;
            if (examples.length < Number(process.env.SHOW ?? 8))
              examples.push(`  held back: "${memory.trim()}" from "${said.slice(0, 100)}"`);
          }
          const others = all.filter((t) => t.session !== s);
          const other = others[Math.floor(random() * others.length)];
          if (other && groundedIn(other.text, memory)) unrelatedPassed++;
          const strangers = everyTurn.filter((_, i) => i !== c).flat();
          if (strangers.length && groundedIn(strangers[Math.floor(random() * strangers.length)], memory))
            strangerPassed++;
        }
    }
  }
  console.log(examples.join("\n"));
  console.log(
    JSON.stringify({
      observations: pairs,
      grounded_in_their_turn: Number(((pairs - heldBack) / pairs).toFixed(4)),
      held_back: heldBack,
      passed_against_another_session_turn: Number((unrelatedPassed / pairs).toFixed(4)),
      passed_against_another_conversation_turn: Number((strangerPassed / pairs).toFixed(4)),
    }),
  );
}

main();
