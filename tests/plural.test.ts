// Counts read as English: "1 message", "2 messages", never "1 messages" or "message(s)".
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { count } from "@/lib/text/plural";

describe("counts in words", () => {
  it("uses the singular for one, the plural otherwise, with grouped digits", () => {
    expect(count(1, "message")).toBe("1 message");
    expect(count(0, "message")).toBe("0 messages");
    expect(count(2, "conversation")).toBe("2 conversations");
    expect(count(1, "memory", "memories")).toBe("1 memory");
    expect(count(2800, "memory", "memories")).toBe("2,800 memories");
  });

  it('no user-facing text writes "(s)" plurals', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== "generated") walk(p);
        } else if (/\.(ts|tsx)$/.test(e.name)) {
          fs.readFileSync(p, "utf8")
            .split("\n")
            .forEach((line, i) => {
              // Text only: string literals and JSX text, where "(s)" is a plural (http(s) URL hints aside).
              const texts = [...line.matchAll(/(["'`])((?:\\.|(?!\1).)*)\1|>([^<>{}]+)</g)].map((m) => m[2] ?? m[3]);
              if (texts.some((t) => /[a-z]\(s\)/i.test(t.replace(/https?\(s\)|http\(s\)/g, ""))))
                offenders.push(`${p}:${i + 1}`);
            });
        }
      }
    };
    for (const dir of ["app", "components", "lib"]) walk(path.join(process.cwd(), dir));
    expect(offenders).toEqual([]);
  });
});
