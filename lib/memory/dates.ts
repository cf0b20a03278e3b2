// Dates named in a question ("on 1 May, 2022", "in July 2022", "October 13,
// 2023", "yesterday", "last week"): recall favours what was said then.
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

export function questionDates(text: string, now = new Date()): DateRange[] {
  const s = text.toLowerCase();
  const out: DateRange[] = [];
  const taken: Array<[number, number]> = [];
  const free = (i: number, len: number) => !taken.some(([a, b]) => i < b && i + len > a);
  const take = (re: RegExp, f: (m: RegExpExecArray) => DateRange | null) => {
    for (const m of s.matchAll(re)) {
      if (!free(m.index!, m[0].length)) continue;
      const r = f(m as RegExpExecArray);
      if (r) {
        out.push(r);
        taken.push([m.index!, m.index! + m[0].length]);
      }
    }
  };
  take(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, "g"), (m) =>
    dayRange(+m[3], monthIndex(m[2]), +m[1]),
  );
  take(new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "g"), (m) =>
    dayRange(+m[3], monthIndex(m[1]), +m[2]),
  );
  take(new RegExp(`\\b${MONTH}\\.?,?\\s+(\\d{4})\\b`, "g"), (m) => ({
    start: utc(+m[2], monthIndex(m[1]), 1),
    end: utc(+m[2], monthIndex(m[1]) + 1, 1),
  }));
  take(/\byesterday\b/g, () => dayRange(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
  take(/\blast week\b/g, () => ({ start: new Date(now.getTime() - 14 * DAY), end: now }));
  take(/\blast month\b/g, () => ({
    start: utc(now.getUTCFullYear(), now.getUTCMonth() - 1, 1),
    end: utc(now.getUTCFullYear(), now.getUTCMonth(), 1),
  }));
  return out.filter((r) => !Number.isNaN(r.start.getTime()) && r.start < r.end);
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
