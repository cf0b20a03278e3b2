// Dates named in a question ("on 1 May, 2022", "in July 2022", "October 13,
// 2023", "yesterday", "last week"): recall favours what was said then. And the
// dates a memory's words count back to from the day it was told, for attribution.
const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const MONTH = `(${MONTHS.join("|")}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)`;
const monthIndex = (m: string) => MONTHS.findIndex((x) => x.startsWith(m.toLowerCase().slice(0, 3)));

export type DateRange = { start: Date; end: Date };

const utc = (y: number, m: number, d: number) => new Date(Date.UTC(y, m, d));
const DAY = 86_400_000;
/** A day, with a day's slack either side (time zones, late-night sessions). */
const dayRange = (y: number, m: number, d: number): DateRange => ({
  start: new Date(utc(y, m, d).getTime() - DAY),
  end: new Date(utc(y, m, d).getTime() + 2 * DAY),
});

/** A day of the month ("11", "11th"), the words joining a stretch's ends, and the year closing a date. */
const NTH = "(\\d{1,2})(?:st|nd|rd|th)?";
const UNTIL = "\\s+(?:and|to|until|till|through)\\s+";
const YEAR = "(?:,\\s*|\\s+)(\\d{4})\\b";
/** A stretch is at most this long: "from 1 January to 31 December" is still a year, longer is no help. */
const MOST_DAYS = 366;

/**
 * The days from one day to another, the year being the last day's, with a day's slack either side as for one day.
 * A stretch over the new year ("between December 20 and January 3, 2024") starts the year before.
 */
function daysBetween(year: number, m1: number, d1: number, m2: number, d2: number): DateRange | null {
  const start = dayRange(m1 > m2 ? year - 1 : year, m1, d1).start;
  const end = dayRange(year, m2, d2).end;
  return end > start && end.getTime() - start.getTime() <= (MOST_DAYS + 3) * DAY ? { start, end } : null;
}

/**
 * A text's first dates are read, at most this many: each is checked against those taken, and a pasted log of 14,000
 * dates held the server half a second.
 */
const DATES_READ = 50;

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/**
 * Days said from today, or from the day a text names ("yesterday", "last Friday", "two weeks ago", "last weekend",
 * "this year"), in the order they are read (a longer phrase before the words it holds: "the day before yesterday"
 * before "yesterday"). Each is what recall favours, with a day's slack either side as for a day named.
 */
function relativeDates(now: Date, present: boolean): Array<[RegExp, (m: RegExpExecArray) => DateRange | null]> {
  const [y, mo, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  const daysAgo = (n: number) => dayRange(y, mo, d - n);
  const upToNow = (start: Date): DateRange => ({ start: new Date(start.getTime() - DAY), end: dayRange(y, mo, d).end });
  const weekday = now.getUTCDay();
  // The last Saturday before this weekend: on a Sunday, "last weekend" is not the one still under way.
  const toSaturday = ((weekday + 1) % 7 || 7) + (weekday === 0 ? 7 : 0);
  // Today, this week, month and year reach now: not for a reading of the past only (lib/memory/validity.ts).
  const upTo = (start: () => Date) => () => (present ? upToNow(start()) : null);
  return [
    [/\bthe day before yesterday\b/g, () => daysAgo(2)],
    [/\b(?:yesterday|last night)\b/g, () => daysAgo(1)],
    [/\b(?:today|tonight|this (?:morning|afternoon|evening))\b/g, upTo(() => utc(y, mo, d))],
    [/\bthe other day\b/g, () => ({ start: utc(y, mo, d - 8), end: utc(y, mo, d + 1) })],
    [
      new RegExp(`\\b(${COUNT}|a couple of|a few)\\s+(days?|weeks?|months?|years?)\\s+ago\\b`, "g"),
      (m) => {
        const [said, unit] = [m[1], m[3]];
        const n = said === "a couple of" ? 2 : said === "a few" ? 3 : count(said);
        if (unit.startsWith("year")) return { start: utc(y - n, 0, 1), end: utc(y - n + 1, 0, 1) };
        if (unit.startsWith("day")) return daysAgo(n);
        // "two weeks ago": a week either side of the day it counts back to.
        if (unit.startsWith("week")) return { start: utc(y, mo, d - 7 * (n + 1)), end: utc(y, mo, d - 7 * n + 8) };
        return { start: utc(y, mo - n, 1), end: utc(y, mo - n + 1, 1) };
      },
    ],
    [/\blast weekend\b/g, () => ({ start: daysAgo(toSaturday).start, end: daysAgo(toSaturday - 1).end })],
    [/\blast week\b/g, () => ({ start: new Date(now.getTime() - 14 * DAY), end: now })],
    [/\bthis week\b/g, upTo(() => utc(y, mo, d - ((weekday + 6) % 7)))],
    [/\blast month\b/g, () => ({ start: utc(y, mo - 1, 1), end: utc(y, mo, 1) })],
    [/\bthis month\b/g, upTo(() => utc(y, mo, 1))],
    [/\blast year\b/g, () => ({ start: utc(y - 1, 0, 1), end: utc(y, 0, 1) })],
    [/\bthis year\b/g, upTo(() => utc(y, 0, 1))],
    // The last such day before today ("on Friday" in a question about the past; "last Friday").
    [
      new RegExp(`\\b(?:last|on|this past)\\s+(${WEEKDAYS.join("|")})\\b`, "g"),
      (m) => daysAgo((weekday - WEEKDAYS.indexOf(m[1]) + 7) % 7 || 7),
    ],
  ];
}

/** How many years back a month named without its year is looked for ("in June": this June, last June, …). */
const YEARLESS_YEARS = 10;

/**
 * A month named without its year, after a word that makes it a time ("in June", "during May", "the second week of
 * November", "early March"; not "may" the verb): that month in each of the last YEARLESS_YEARS years that it has begun
 * in. Which year is meant is not said, and a user's history may be years older than this one (imported chats): the
 * ranges only favour what was said in them, and the words decide between the years.
 */
const YEARLESS_MONTH = new RegExp(`\\b(?:in|during|of|early|mid|late)[\\s-]+${MONTH}\\b(?!['’]|\\.?,?\\s*\\d)`, "g");
function monthInPastYears(month: number, now: Date): DateRange[] {
  const out: DateRange[] = [];
  for (let y = now.getUTCFullYear(); out.length < YEARLESS_YEARS; y--) {
    const start = utc(y, month, 1);
    if (start <= now) out.push({ start, end: utc(y, month + 1, 1) });
  }
  return out;
}

/**
 * The dates a text names; with `years`, a bare year too ("2018", "since 2016": off for questions, "Cyberpunk 2077");
 * with `yearless`, a month named without its year, in each of the last years (YEARLESS_MONTH); with `present: false`,
 * no phrase reaching today ("today", "this week").
 */
export function questionDates(text: string, now = new Date(), opts: DateOptions = {}): DateRange[] {
  return readDates(text, now, opts).ranges;
}

type DateOptions = { years?: boolean; yearless?: boolean; present?: boolean };

/**
 * Words of a question that ask what happened, of no topic of their own: with a date and nothing else ("What did we
 * talk about yesterday?", "What happened last weekend?"), it asks about a time, not a topic.
 */
const TOPICLESS = new Set(
  (
    "what which who whom where when how did do does done doing was were is are be been have has had we us our i me " +
    "my you your the a an of on in at to about up there it anything something everything happen happened happening " +
    "go went talk talked talking say said tell told discuss discussed chat chatted speak spoke mention mentioned " +
    "again remind us get got day days week weeks month months year years ago last this past other before"
  ).split(" "),
);

/** Whether a question names a date and asks only what was said or done then ("What did we discuss on Friday?"). */
export function asksOnlyWhen(question: string, now = new Date(), opts: DateOptions = {}): boolean {
  const { ranges, rest } = readDates(question, now, opts);
  return ranges.length > 0 && !rest.split(/[^\p{L}\p{N}']+/u).some((w) => w && !TOPICLESS.has(w));
}

/** The dates a text names, and its (lowercased) text with them blanked out. */
function readDates(text: string, now: Date, opts: DateOptions): { ranges: DateRange[]; rest: string } {
  const s = text.toLowerCase();
  const out: DateRange[] = [];
  const taken: Array<[number, number]> = [];
  const free = (i: number, len: number) => !taken.some(([a, b]) => i < b && i + len > a);
  const take = (re: RegExp, f: (m: RegExpExecArray) => DateRange | DateRange[] | null) => {
    for (const m of s.matchAll(re)) {
      if (out.length >= DATES_READ) return;
      if (!free(m.index!, m[0].length)) continue;
      const r = f(m as RegExpExecArray);
      if (r && (!Array.isArray(r) || r.length)) {
        out.push(...[r].flat());
        taken.push([m.index!, m.index! + m[0].length]);
      }
    }
  };
  // A stretch of days, its year said once at its end: "between August 11 and August 15 2023", "from 3 to 10 May,
  // 2023". Read first, so its last day is not taken for a day of its own.
  take(
    new RegExp(`\\b(?:between|from)\\s+${MONTH}\\.?\\s+${NTH}${UNTIL}(?:${MONTH}\\.?\\s+)?${NTH}${YEAR}`, "g"),
    (m) => daysBetween(+m[5], monthIndex(m[1]), +m[2], monthIndex(m[3] ?? m[1]), +m[4]),
  );
  take(
    new RegExp(
      `\\b(?:between|from)\\s+(?:the\\s+)?${NTH}(?:\\s+(?:of\\s+)?${MONTH})?${UNTIL}(?:the\\s+)?${NTH}\\s*(?:of\\s+)?${MONTH}\\.?${YEAR}`,
      "g",
    ),
    (m) => daysBetween(+m[5], monthIndex(m[2] ?? m[4]), +m[1], monthIndex(m[4]), +m[3]),
  );
  // A day named counts for the days said from it ("last Friday, on 23 January, 2022": the Friday before it).
  let anchor: Date | undefined;
  const namedDay = (y: number, m: number, d: number) => {
    anchor ??= new Date(utc(y, m, d).getTime() + DAY / 2);
    return dayRange(y, m, d);
  };
  // "10 July, 2022", and typed in haste "10July, 2022" or "December 1,2023".
  take(new RegExp(`\\b${NTH}\\s*(?:of\\s+)?${MONTH}\\.?${YEAR}`, "g"), (m) => namedDay(+m[3], monthIndex(m[2]), +m[1]));
  take(new RegExp(`\\b${MONTH}\\.?\\s+${NTH}${YEAR}`, "g"), (m) => namedDay(+m[3], monthIndex(m[1]), +m[2]));
  take(new RegExp(`\\b${MONTH}(?:\\.?,?\\s+|\\.)(\\d{4})\\b`, "g"), (m) => ({
    start: utc(+m[2], monthIndex(m[1]), 1),
    end: utc(+m[2], monthIndex(m[1]) + 1, 1),
  }));
  for (const [re, range] of relativeDates(anchor ?? now, opts.present !== false)) take(re, range);
  if (opts.yearless) take(YEARLESS_MONTH, (m) => monthInPastYears(monthIndex(m[1]), now));
  if (opts.years) take(/\b(19\d\d|20\d\d)\b/g, (m) => ({ start: utc(+m[1], 0, 1), end: utc(+m[1] + 1, 0, 1) }));
  let rest = s;
  for (const [a, b] of taken) rest = rest.slice(0, a) + " ".repeat(b - a) + rest.slice(b);
  return { ranges: out.filter((r) => !Number.isNaN(r.start.getTime()) && r.start < r.end), rest };
}

const COUNT_WORDS = ["a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"];
const COUNT = `(\\d{1,2}|${COUNT_WORDS.join("|")}|twelve)`;
const count = (w: string) => (/^\d/.test(w) ? +w : w === "twelve" ? 12 : Math.max(1, COUNT_WORDS.indexOf(w)));
const SPAN = new RegExp(
  `\\b(?:${COUNT}\\s+(years?|months?)\\s+ago|for\\s+(?:about\\s+)?${COUNT}\\s+(years?|months?)|last (year|month))\\b`,
  "gi",
);

/**
 * When the events a text tells of happened, as far as its words and the day it was told say: that day, and the days
 * it counts back to ("started surfing five years ago", "has had turtles for 3 years", "last year").
 */
export function eventDates(text: string, told: Date): Date[] {
  const out = [told];
  for (const m of text.matchAll(SPAN)) {
    if (out.length > DATES_READ) break;
    const n = m[5] ? 1 : count((m[1] ?? m[3]).toLowerCase());
    const unit = (m[2] ?? m[4] ?? m[5]).toLowerCase();
    const back = new Date(told);
    if (unit.startsWith("year")) back.setUTCFullYear(back.getUTCFullYear() - n);
    else back.setUTCMonth(back.getUTCMonth() - n);
    out.push(back);
  }
  return out;
}

// Words that ask when, how long, or about a stretch of time: then the prompt dates each memory (lib/memory/recall.ts),
// at a line per day; otherwise the days would cost budget the answer does not need.
const TIME_CUE = new RegExp(
  [
    "when",
    "how (long|often|soon|recently)",
    "how many (times|days|weeks|months|years|hours)",
    "what (year|month|day|date|time|week)",
    "which (year|month|day|date|week)",
    "ago",
    "since",
    "until",
    "till",
    "before",
    "after",
    "during",
    "(last|past|next|this|previous) (year|month|week|weekend|time|summer|winter|spring|autumn|fall|night)",
    "recent(ly)?",
    "latest",
    "lately",
    "first",
    "yet",
    "still",
    "any ?more",
    "no longer",
    "used to",
    "(yester|to)day",
    "timeline",
    "history",
    "date",
    "anniversary",
    "birthday",
    "age",
    "old",
    MONTH,
    "(19|20)\\d\\d",
  ]
    .map((w) => `\\b${w}\\b`)
    .join("|"),
  "i",
);

/** Whether a question's words ask when, how long, or about a time (recall also counts the dates it names). */
export function asksAboutTime(text: string): boolean {
  return TIME_CUE.test(text);
}
