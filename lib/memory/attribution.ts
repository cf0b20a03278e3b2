// Which of the memories sent with a question did the answer draw on? Read after the answer, from its text, so it
// works with any model, including one that ignores every instruction: a memory counts as used when the answer
// carries enough of what is specific to it. Its words are weighed by how specific they are: a word the question
// already said counts half (an answer echoes its question), a word several of the sent memories share counts less,
// and a name or a number (written with a capital inside the memory, or with digits) is enough on its own. A short
// answer carries little of any memory ("a dance studio" from "Jon is working on opening a dance studio, …"), so a
// memory also counts when it holds most of what the answer says beyond the question; when several hold it
// ("Barcelona"), the one of them that best matches the question does; an answer listing things ("piano, violin and
// drums") is read so item by item. An answer that gives a date uses the memory filed within a month of it (told
// after the event, or as a plan before it) that best matches the question. A short reply that carries no memory's
// words ("Yes") uses the memory the question is clearly about, unless it says it does not know or gives a figure no
// memory holds; a count ("seven" to "How many tournaments has Nate won?") uses every memory it counted. A memory
// about someone the question does not ask about ("Caroline's family…" for a question about Melanie) is never used
// by a coincidence of words. "Memories used" and every signal learned from use (use counts, ratings, procedure
// checks, expiry) read this, not the list of memories the model was given. A model that cites what it used
// ("[memory: Has a dog]", lib/memory/citation-format.ts) adds those too, whoever they are about.
import { indexWords } from "@/lib/crypto/content";
import { citations } from "./citation-format";
import { eventDates, questionDates } from "./dates";
import { aboutSomeoneElse, askedNamesOf, namedWords, subjectsOf } from "./subjects";

/** A memory sent with the question; `since`: the day the prompt filed it under, when it gave days. */
export type SentMemory = { id: string; text: string; since?: Date };

/** Words too general to show a memory was used ("user", "likes", "named"), after stemming. */
const GENERAL = new Set(
  indexWords(
    "user users has have had name named called likes like liked prefers prefer preferred wants want " +
      "enjoys enjoy lives live living works work working currently usually often always really very " +
      "also his her their them my me your yours about from into when what who which there here " +
      "do does did can could will would should must go goes going went gone get gets getting got",
  ),
);

/** A word that can show use: not general, and more than one letter (a number of one digit, "7 guests", counts). */
const specific = (w: string) => (w.length > 1 || /\d/.test(w)) && !GENERAL.has(w);

/** Share of a memory's specific weight the answer must carry, and the share that suffices with a name in it. */
const USED_SHARE = 1 / 3;
const NAMED_SHARE = 0.2;

/**
 * The answer side: a memory holding this share of the weight of the answer's own words (not the question's, weighed
 * as above), and at least ANSWER_MIN_WEIGHT of it (one word only it holds, or two that one other memory shares).
 */
const ANSWER_SHARE = 0.5;
const ANSWER_MIN_WEIGHT = 1;

/** Share of a citation's words a memory must hold to be the one cited. */
const CITED_SHARE = 0.6;

/** The sent memories the answer cites: for each citation, the memory holding most of its words. */
function citedMemories(answer: string, sent: SentMemory[]): Set<string> {
  const out = new Set<string>();
  const wordsOf = sent.map((m) => new Set(indexWords(m.text)));
  for (const quote of citations(answer)) {
    const words = indexWords(quote);
    if (!words.length) continue;
    let best = -1;
    let bestShare = 0;
    wordsOf.forEach((w, i) => {
      const share = words.filter((x) => w.has(x)).length / words.length;
      if (share > bestShare) [best, bestShare] = [i, share];
    });
    if (best >= 0 && bestShare >= CITED_SHARE) out.add(sent[best].id);
  }
  return out;
}

/** What the question asks, read once: its words, each sent memory's specific words, and whom each is about. */
type Reading = {
  asked: Set<string>;
  askedNames: string[];
  wordsOf: Set<string>[];
  subjects: Array<string | null>;
  others: Set<number>;
};

/**
 * Of these memories (indices into the sent ones), the one that matches the question best, each question word weighed
 * by how few of the sent memories hold it; null unless one is clearly best (ahead of every other, matching something).
 * A memory about someone the question does not ask about is never it; of two that match alike, one about the person
 * asked about ("Caroline attended an LGBTQ conference" over "Melanie finds LGBTQ events like the conference Caroline
 * attended") is ahead.
 */
function bestForQuestion(candidates: number[], r: Reading): number | null {
  const at = aheadForQuestion(candidates, r);
  return at.length === 1 ? at[0] : null;
}

/** Of these memories, the ones matching the question best, alike: one, or several when they tie. */
function aheadForQuestion(candidates: number[], r: Reading): number[] {
  const { asked, wordsOf, subjects, others } = r;
  const spread = new Map<string, number>();
  for (const words of wordsOf) for (const w of words) if (asked.has(w)) spread.set(w, (spread.get(w) ?? 0) + 1);
  let best = 0;
  let at: number[] = [];
  for (const i of candidates) {
    if (others.has(i)) continue;
    let score = 0;
    for (const w of wordsOf[i]) if (asked.has(w)) score += 1 / spread.get(w)!;
    if (score > 0 && subjects[i] !== null && asked.has(subjects[i]!)) score += SUBJECT_EDGE;
    if (score > best) [best, at] = [score, [i]];
    else if (score === best && score > 0) at.push(i);
  }
  return at;
}

/** Less than any word weighs (one held by all of up to 1,000 sent memories): it only settles a tie. */
const SUBJECT_EDGE = 1e-3;

/**
 * How far from an event the memory telling of it may be filed: after it ("last week", "two weeks ago"), or before
 * it for a plan ("next month").
 */
const TOLD_WITHIN = 31 * 86_400_000;

/**
 * The memory an answer drew on for a date: when the answer names a day (or month) the prompt filed memories under,
 * the one of them that matches the question best ("When did I go to the support group?" answered "7 May 2023"
 * shares no word with "Went to an LGBTQ support group", but names the day it was filed under).
 */
function datedMemory(answer: string, sent: SentMemory[], r: Reading): number | null {
  if (!sent.some((m) => m.since)) return null;
  const ranges = questionDates(answer, new Date(), { years: true });
  if (!ranges.length) return null;
  const near = (at: Date, r: { start: Date; end: Date }) =>
    at.getTime() >= r.start.getTime() - TOLD_WITHIN && at.getTime() < r.end.getTime() + TOLD_WITHIN;
  const onDay = sent.flatMap((m, i) =>
    m.since && eventDates(m.text, m.since).some((at) => ranges.some((r) => near(at, r))) ? [i] : [],
  );
  const ahead = aheadForQuestion(onDay, r);
  if (ahead.length <= 1) return ahead[0] ?? null;
  // Several match the question alike ("went to a pride parade" told twice that summer): the one told nearest the
  // day the answer gives, when one is. Not when all they share with the question is whom it asks about.
  const aboutWhat = (i: number) => [...r.wordsOf[i]].some((w) => r.asked.has(w) && !r.askedNames.includes(w));
  if (!aboutWhat(ahead[0])) return null;
  const away = (i: number) =>
    Math.min(
      ...eventDates(sent[i].text, sent[i].since!).flatMap((at) =>
        ranges.map((r) => Math.max(0, r.start.getTime() - at.getTime(), at.getTime() - r.end.getTime())),
      ),
    );
  const [first, second] = ahead.map((i) => ({ i, away: away(i) })).sort((a, b) => a.away - b.away);
  return first.away < second.away ? first.i : null;
}

/** A word no text holds: the day a question names, held by the memories told then. */
const ASKED_DAY = "\u0000day";

/**
 * A question naming a day ("at the shelter on May 25, 2023") is about what was told then: the memories filed on that
 * day hold the day as one of the question's words, weighed as rare as it is among the memories sent.
 */
function toldOnAskedDay(question: string, asked: Set<string>, sent: SentMemory[], wordsOf: Set<string>[]) {
  const ranges = questionDates(question);
  if (!ranges.length) return;
  let any = false;
  sent.forEach((m, i) => {
    if (!m.since || !ranges.some((r) => m.since! >= r.start && m.since! < r.end)) return;
    wordsOf[i].add(ASKED_DAY);
    any = true;
  });
  if (any) asked.add(ASKED_DAY);
}

/**
 * Of an answer (and its question), attribution reads this much: what a memory gave an answer shows long before its
 * end, and stemming every word of a megabytes-long answer held the server for most of a second.
 */
const READ_CHARS = 100_000;

/** The ids of the sent memories the answer drew on, in the order they were sent. */
export function attributeMemories(answer: string, question: string, sent: SentMemory[]): string[] {
  answer = answer.slice(0, READ_CHARS);
  question = question.slice(0, READ_CHARS);
  if (!answer.trim() || !sent.length) return [];
  const said = new Set(indexWords(answer));
  const asked = new Set(indexWords(question));
  const wordsOf = sent.map((m) => new Set(indexWords(m.text).filter(specific)));
  toldOnAskedDay(question, asked, sent, wordsOf);
  const subjects = subjectsOf(
    sent.map((m) => m.text),
    question,
  );
  const askedNames = askedNamesOf(question);
  const others = aboutSomeoneElse(askedNames, subjects, (i, n) => wordsOf[i].has(n));
  const r: Reading = { asked, askedNames, wordsOf, subjects, others };
  const quoted = citedMemories(answer, sent);
  const picked = new Set<number>();
  const dated = datedMemory(answer, sent, r);
  if (dated !== null) picked.add(dated);
  const spread = new Map<string, number>();
  for (const words of wordsOf) for (const w of words) spread.set(w, (spread.get(w) ?? 0) + 1);
  const whole = holding(said, r, spread);
  const explainsAnswer = (i: number) => whole.holds(i) && whole.held[i] >= ANSWER_MIN_WEIGHT;
  if (whole.answered !== null) picked.add(whole.answered);
  // A listing answer ("Kyle, Sara"): each item may come from a memory of its own.
  for (const item of listItems(answer)) {
    const { answered } = holding(new Set(indexWords(item)), r, spread);
    if (answered !== null) picked.add(answered);
  }
  for (const i of countedMemories(answer, question, r)) picked.add(i);
  const out = sent
    .filter((m, i) => {
      // A citation is the model's own word; anything else about someone not asked about is a coincidence of words.
      if (quoted.has(m.id)) return true;
      if (r.others.has(i)) return false;
      if (picked.has(i)) return true;
      const words = wordsOf[i];
      if (!words.size) return false;
      if (explainsAnswer(i)) return true;
      const names = namedWords(m.text);
      let total = 0;
      let carried = 0;
      let namedCarried = false;
      for (const w of words) {
        if (w === ASKED_DAY) continue; // the day told is no word an answer carries
        const weight = (asked.has(w) ? 0.5 : 1) / (spread.get(w) ?? 1);
        total += weight;
        if (!said.has(w)) continue;
        carried += weight;
        if (names.has(w) && !asked.has(w)) namedCarried = true;
      }
      const share = carried / total;
      return share >= USED_SHARE || (namedCarried && share >= NAMED_SHARE);
    })
    .map((m) => m.id);
  if (out.length) return out;
  const replied = replyMemory(answer, r);
  return replied === null ? out : [sent[replied].id];
}

/**
 * Which memories hold what a text says beyond the question (each word weighed by how few memories hold it; a memory
 * holds it with ANSWER_SHARE of that weight), and of those holding the most of it the one about what was asked
 * ("Barcelona" in two).
 */
function holding(said: Set<string>, r: Reading, spread: Map<string, number>) {
  const { asked, wordsOf } = r;
  const own = new Set([...said].filter((w) => specific(w) && !asked.has(w)));
  const ownWeight = (w: string) => 1 / (spread.get(w) ?? 1);
  let ownTotal = 0;
  for (const w of own) ownTotal += ownWeight(w);
  // Each memory's few words walked, not a long answer's many.
  const held = wordsOf.map((words) => {
    let sum = 0;
    for (const w of words) if (own.has(w)) sum += ownWeight(w);
    return sum;
  });
  const holds = (i: number) => held[i] > 0 && held[i] >= ANSWER_SHARE * ownTotal;
  // Of those, the ones holding the most of it ("education and infrastructure" both, not only "improve").
  const most = Math.max(0, ...held) - 1e-9;
  const answered = bestForQuestion(
    wordsOf.flatMap((_, i) => (holds(i) && held[i] >= most ? [i] : [])),
    r,
  );
  return { held, holds, answered };
}

/**
 * The items of an answer that lists things ("Kyle, Sara", "piano and violin"): short parts, at least two, each once.
 * Only the first LIST_ITEMS_READ are read: each is weighed against every memory, and an answer of 20,000 comma-cut
 * items held the server for 186 ms after the answer (100,000 characters of prose: 42 ms).
 */
const LIST_ITEM_WORDS = 5;
const LIST_ITEMS_READ = 200;
function listItems(answer: string): string[] {
  const items = new Set<string>();
  for (const part of answer.split(/[,;\n•]|\band\b/i)) {
    const item = part.trim().toLowerCase();
    if (item && item.split(/\s+/).length <= LIST_ITEM_WORDS) items.add(item);
    if (items.size >= LIST_ITEMS_READ) break;
  }
  return items.size >= 2 ? [...items] : [];
}

/** A question that counts, and an answer that is a count ("two", "Twice.", "9 times"). */
const COUNTS = /\bhow (?:many|often)\b/i;
const A_COUNT =
  /^\s*(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|once|twice|thrice)\b(?:\s+\p{L}+){0,2}\W*$/iu;

/**
 * The memories a count was made from: "How many tournaments has Nate won?" answered "seven" carries no memory's
 * words but counts every memory of a tournament won. Each memory holding most of what the question asks about
 * (REPLY_QUESTION_SHARE of its specific words), about the person asked about, and giving no figure of its own that the
 * answer does not ("Hosted a party with 7 guests" is not what "3" counted).
 */
function countedMemories(answer: string, question: string, r: Reading): number[] {
  if (!COUNTS.test(question) || !A_COUNT.test(answer)) return [];
  const about = [...r.asked].filter(specific);
  const figures = new Set(answer.match(/\d+/g) ?? []);
  return r.wordsOf.flatMap((words, i) => {
    if (r.others.has(i) || [...words].some((w) => /^\d+$/.test(w) && !figures.has(w))) return [];
    const held = about.filter((w) => words.has(w)).length;
    return about.length && held >= REPLY_QUESTION_SHARE * about.length ? [i] : [];
  });
}

/** A short reply: "Yes", "Twice", "Hoodies"; an essay that carries no memory's words drew on none. */
const SHORT_REPLY_WORDS = 40;
/** Share of the question's specific words the memory a short reply answers must hold. */
const REPLY_QUESTION_SHARE = 0.6;
/** A reply that says it does not know drew on nothing, however well a memory matched the question. */
const DECLINES = new RegExp(
  [
    "\\b(?:do|does|did)(?:n[o'’]t| not) (?:know|have|see|recall|remember)\\b",
    "\\b(?:can|could)(?:n[o'’]t| not) (?:find|tell|say|recall|remember)\\b",
    "\\b(?:not sure|no (?:idea|information|record|mention)|unknown|not mentioned)\\b",
  ].join("|"),
  "i",
);

/**
 * The memory a short reply answers when the reply carries none of its words ("Did Melanie make the black and white
 * bowl?" "Yes"): the one that clearly matches the question best, holding most of what it asks about. Not for a
 * number or a date no memory holds ("3", "9 June"): a figure that came from no memory shows none was used.
 */
function replyMemory(answer: string, r: Reading): number | null {
  const { asked, wordsOf } = r;
  if (answer.split(/\s+/).length > SHORT_REPLY_WORDS || DECLINES.test(answer) || /\d/.test(answer)) return null;
  const best = bestForQuestion(
    wordsOf.map((_, i) => i),
    r,
  );
  if (best === null) return null;
  const about = [...asked].filter(specific);
  const held = about.filter((w) => wordsOf[best].has(w)).length;
  return about.length && held >= REPLY_QUESTION_SHARE * about.length ? best : null;
}
