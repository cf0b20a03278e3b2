// A deterministic guard run on every memory before it is written: passwords,
// API keys, tokens, card and account numbers are never stored. Whatever the
// model or the user proposes, matches are redacted; a memory that is nothing
// but a secret is dropped.
const PATTERNS: Array<[RegExp, string]> = [
  [/\b(?:sk|pk|rk)[-_](?:live|test|proj)?[-_]?[A-Za-z0-9_-]{16,}\b/g, "API key"],
  [/\bAKIA[0-9A-Z]{16}\b/g, "API key"],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, "API key"],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, "API key"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, "API key"],
  [/\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/g, "token"],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, "private key"],
  [
    /\b(?:password|passwd|passcode|pwd|pin|passphrase|secret|api[ _-]?key|token)\b(\s*(?:is|=|:|was)\s*)(["'`]?)[^\s"'`,;]{3,}\2/gi,
    "password",
  ],
  [/\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b/g, "account number"], // IBAN
  [
    /\b(?:account|acct|routing|sort code|iban|ssn|social security)(?:\s+(?:number|no\.?|#))?\s*(?:is|:|=)?\s*[\d -]{6,}\d\b/gi,
    "account number",
  ],
  [/\b\d{3}-\d{2}-\d{4}\b/g, "account number"], // US SSN shape
];

const CARD_SHAPES = /\b(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}|\d{4}([ -])\d{6}\2\d{4,5})\b/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export type Redaction = { text: string; redacted: string[]; onlySecret: boolean };

export function redactSecrets(input: string): Redaction {
  const found = new Set<string>();
  let text = input;
  // Card numbers: written as cards are (one run of 13-19 digits, or groups of
  // four, or Amex's 4-6-5), starting with a card network's prefix (2-6), and
  // passing the Luhn check. Ordinary numbers in text ("fact 12 1795316601756")
  // rarely meet all three.
  text = text.replace(CARD_SHAPES, (m) => {
    const digits = m.replace(/\D/g, "");
    if (digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhn(digits)) {
      found.add("card number");
      return "[redacted card number]";
    }
    return m;
  });
  for (const [re, label] of PATTERNS) {
    text = text.replace(re, (m, ...groups) => {
      found.add(label);
      if (label === "password" && typeof groups[0] === "string") {
        const keyword = m.slice(0, m.length - m.trimStart().length) + m.split(groups[0])[0];
        return `${keyword}${groups[0]}[redacted]`;
      }
      return `[redacted ${label}]`;
    });
  }
  const remaining = text
    .replace(/\[redacted[^\]]*\]/g, "")
    .replace(/\b(?:my|the|is|are|for|of|and|a|an|to|password|key|api|token|number|card|account)\b/gi, "")
    .replace(/[\s\p{P}]/gu, "");
  return { text, redacted: [...found], onlySecret: found.size > 0 && remaining.length < 4 };
}
