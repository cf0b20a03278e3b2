import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, databasePoolSize, loadConfig, migrationsDirFromEnv } from "@/lib/config";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-cfg-"));
const fail = (env: Record<string, string>) => {
  try {
    loadConfig(env as NodeJS.ProcessEnv);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
  throw new Error("expected a configuration error");
};

describe("configuration", () => {
  it("DATABASE_POOL_SIZE and MNEMO_MIGRATIONS_DIR are validated like the rest (empty: the default)", () => {
    expect(databasePoolSize({ DATABASE_POOL_SIZE: "" })).toBe(10); // as .env.example ships it
    expect(databasePoolSize({ DATABASE_POOL_SIZE: " 4 " })).toBe(4);
    expect(() => databasePoolSize({ DATABASE_POOL_SIZE: "abc" })).toThrow(
      /^Invalid configuration: DATABASE_POOL_SIZE must be a whole number/,
    );
    expect(() => databasePoolSize({ DATABASE_POOL_SIZE: "0" })).toThrow(ConfigError);
    expect(fail({ DATABASE_POOL_SIZE: "abc", MNEMO_DATA_DIR: tmp() })).toMatch(/DATABASE_POOL_SIZE/);
    expect(migrationsDirFromEnv({ MNEMO_MIGRATIONS_DIR: "" })).toBe(path.join(process.cwd(), "prisma", "migrations"));
    expect(migrationsDirFromEnv({ MNEMO_MIGRATIONS_DIR: "/srv/m" })).toBe("/srv/m");
  });

  it("production refuses to start without AUTH_SECRET, naming the variable", () => {
    const msg = fail({ NODE_ENV: "production", MNEMO_DATA_DIR: tmp() });
    expect(msg).toMatch(/^Invalid configuration: AUTH_SECRET must be set in production/);
    expect(msg.split("\n")).toHaveLength(1);
  });

  it("development generates AUTH_SECRET once, keeps it under the data folder, and reuses it", () => {
    const dir = tmp();
    const a = loadConfig({ NODE_ENV: "development", MNEMO_DATA_DIR: dir } as NodeJS.ProcessEnv);
    expect(a.authSecretGenerated).toBe(true);
    expect(fs.readFileSync(path.join(dir, "auth-secret"), "utf8").trim()).toBe(a.authSecret);
    expect(fs.statSync(path.join(dir, "auth-secret")).mode & 0o077).toBe(0);
    const b = loadConfig({ NODE_ENV: "development", MNEMO_DATA_DIR: dir } as NodeJS.ProcessEnv);
    expect(b.authSecretGenerated).toBe(false);
    expect(b.authSecret).toBe(a.authSecret);
  });

  it("names the variable and what it expects for bad values", () => {
    const base = { AUTH_SECRET: "x".repeat(40), MNEMO_DATA_DIR: tmp() };
    expect(fail({ ...base, DATABASE_URL: "mysql://localhost/x" })).toMatch(/DATABASE_URL must be a postgres:\/\//);
    expect(fail({ ...base, AUTH_SECRET: "short" })).toMatch(/AUTH_SECRET must be at least 32 characters/);
    expect(fail({ ...base, OPENAI_BASE_URL: "not a url" })).toMatch(/OPENAI_BASE_URL must be an http/);
    // No scheme: a URL to the parser ("localhost:" as its scheme), not to a person.
    expect(fail({ ...base, OPENAI_BASE_URL: "localhost:5110/v1" })).toMatch(/OPENAI_BASE_URL must be an http/);
    expect(fail({ ...base, AUTH_GITHUB_ID: "id" })).toMatch(
      /AUTH_GITHUB_SECRET must be set when AUTH_GITHUB_ID is set/,
    );
    expect(fail({ ...base, AUTH_OIDC_ID: "id", AUTH_OIDC_SECRET: "s" })).toMatch(/AUTH_OIDC_ISSUER must be set/);
    expect(fail({ ...base, MNEMO_PASSWORD_MIN_LENGTH: "4" })).toMatch(
      /MNEMO_PASSWORD_MIN_LENGTH must be a whole number >= 8/,
    );
  });

  it("switches OAuth providers on by their variables alone", () => {
    const c = loadConfig({
      AUTH_SECRET: "x".repeat(40),
      MNEMO_DATA_DIR: tmp(),
      AUTH_GOOGLE_ID: "g",
      AUTH_GOOGLE_SECRET: "gs",
      AUTH_OIDC_ISSUER: "https://id.example.com",
      AUTH_OIDC_ID: "o",
      AUTH_OIDC_SECRET: "os",
    } as unknown as NodeJS.ProcessEnv);
    expect(c.oauth.github).toBeUndefined();
    expect(c.oauth.google).toEqual({ clientId: "g", clientSecret: "gs" });
    expect(c.oauth.oidc).toMatchObject({ issuer: "https://id.example.com", name: "Single sign-on" });
  });
});
