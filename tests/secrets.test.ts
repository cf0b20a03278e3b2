import { describe, expect, it } from "vitest";
import { redactSecrets } from "@/lib/memory/secrets";

describe("secret guard", () => {
  it.each([
    ["my password is hunter22!", "password"],
    ["API key: sk-proj-abcdefghijklmnopqrstuvwxyz123456", "API key"],
    ["use AKIAABCDEFGHIJKLMNOP for aws", "API key"],
    ["card 4111 1111 1111 1111 expires soon", "card number"],
    ["my account number is 12345678901", "account number"],
    ["IBAN DE89 3704 0044 0532 0130 00", "account number"],
    ["token = ghp_abcdefghijklmnopqrstuvwxyz0123456789", "API key"],
  ])("redacts %s", (input, label) => {
    const r = redactSecrets(input);
    expect(r.redacted).toContain(label);
    expect(r.text).toContain("[redacted");
    expect(r.text).not.toMatch(/hunter22|abcdefghijklmnop|4111 1111|12345678901|3704 0044|AKIAABCDEF/);
  });

  it("drops a memory that is only a secret, keeps the rest of a mixed one", () => {
    expect(redactSecrets("password: hunter22!").onlySecret).toBe(true);
    const mixed = redactSecrets("Prefers dark mode; wifi password is tr0ub4dor");
    expect(mixed.onlySecret).toBe(false);
    expect(mixed.text).toContain("Prefers dark mode");
  });

  it("leaves ordinary facts alone", () => {
    for (const s of [
      "My name is Sara and I like pizza",
      "Lives in Berlin since 2019",
      "Has 2 kids aged 4 and 7",
      "Phone model is Pixel 8",
    ]) {
      expect(redactSecrets(s)).toEqual({ text: s, redacted: [], onlySecret: false });
    }
  });
});
