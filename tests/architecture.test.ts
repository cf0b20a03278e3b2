// The code's shape, checked: only lib/user-context.ts looks up a user's cipher; lib/ has no import cycles (type-only imports included: a newcomer cannot tell
// which of a cycle's modules loads first), no module but lib/errors.ts defines an error the user is shown,
// every server action goes through lib/http/action.ts's wrappers, and raw SQL is a tagged template with a row type.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const read = (f: string) => fs.readFileSync(path.join(root, f), "utf8");

function filesUnder(dir: string, ext = /\.tsx?$/): string[] {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && ext.test(d.name))
    .map((d) => path.relative(root, path.join(d.parentPath, d.name)))
    .filter((f) => !f.startsWith("lib/generated"));
}

/** The lib/ modules a file imports (static, type-only and dynamic), as paths relative to the root. */
function libImports(file: string): string[] {
  const out: string[] = [];
  for (const m of read(file).matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
    let spec = m[1];
    if (spec.startsWith("@/")) spec = spec.slice(2);
    else if (spec.startsWith(".")) spec = path.relative(root, path.resolve(path.dirname(path.join(root, file)), spec));
    else continue;
    const hit = [`${spec}.ts`, `${spec}.tsx`, `${spec}/index.ts`].find((c) => fs.existsSync(path.join(root, c)));
    if (hit?.startsWith("lib/")) out.push(hit);
  }
  return out;
}

function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 1 | 2>(); // 1: on the current path, 2: done
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    state.set(n, 1);
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 1) return [...stack.slice(stack.indexOf(m)), m];
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 2);
    return null;
  };
  for (const n of graph.keys())
    if (!state.has(n)) {
      const c = visit(n);
      if (c) return c;
    }
  return null;
}

/** The files that call a function (its name followed by "("), its definition left out. */
const callersOf = (name: string, files: string[]) =>
  files.filter((f) =>
    new RegExp(`(?<!function )\\b${name}\\(`).test(read(f).replace(new RegExp(`export async function ${name}\\b`), "")),
  );

describe("architecture", () => {
  it("only the gate and the user's own hand write memories (lib/memory/store.ts)", () => {
    // The gate, the undo it runs, a conflict the user settles, the user's own memory file, and the dashboard.
    const allowed = [
      "lib/memory/writes.ts",
      "lib/memory/revert.ts",
      "lib/memory/conflicts.ts",
      "lib/memory/portable.ts",
      "app/(app)/settings/memory/actions.ts",
      // A shared project's members' own hand (lib/projects/access.ts decides who may).
      "lib/projects/project-memory.ts",
    ];
    const importers = [...filesUnder("lib"), ...filesUnder("app"), ...filesUnder("components")].filter((f) =>
      libImports(f).includes("lib/memory/store.ts"),
    );
    expect(importers.filter((f) => !allowed.includes(f))).toEqual([]);
    // And the rule can fail: the gate itself imports it.
    expect(importers).toContain("lib/memory/writes.ts");
  });

  it("only the answer core records an answer's uses, sends and usage", () => {
    const lib = [...filesUnder("lib"), ...filesUnder("app")];
    expect(callersOf("recordUses", lib)).toEqual(["lib/answer/settle.ts"]);
    // Sends: the answer core, and the background and tool paths that send memories themselves (each its own client).
    for (const f of ["lib/chat/turn.ts", "lib/api/completions.ts"]) {
      expect(read(f)).not.toMatch(/\brecordSend\(|\brecordUsage\(|\brecordUses\(/);
      expect(read(f)).toMatch(/\b(settleAnswer|chargeAnswer)\(/);
    }
    // Usage: the meter for every model call (an answer's through the answer core), the embedder for vectors.
    expect(callersOf("recordUsage", lib).sort()).toEqual(
      ["lib/llm/embeddings.ts", "lib/llm/metered.ts", "lib/memory/embed.ts"].sort(),
    );
    expect(callersOf("meterAnswer", lib)).toEqual(["lib/answer/settle.ts"]);
  });

  it("no file in lib/ is over 500 lines", () => {
    const long = filesUnder("lib")
      .map((f) => [f, read(f).split("\n").length] as const)
      .filter(([, n]) => n > 500);
    expect(long).toEqual([]);
  });

  it("lib/ has no import cycles", () => {
    const graph = new Map(filesUnder("lib").map((f) => [f, libImports(f)]));
    expect(findCycle(graph)?.join(" → ") ?? null).toBeNull();
  });

  it("the cycle finder finds a cycle (so the check above can fail)", () => {
    expect(
      findCycle(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
        ]),
      ),
    ).toEqual(["a", "b", "c", "a"]);
  });

  it("only lib/errors.ts defines errors shown to the user", () => {
    const elsewhere = [...filesUnder("lib"), ...filesUnder("app")].filter(
      (f) => f !== "lib/errors.ts" && /class \w+ extends AppError\b/.test(read(f)),
    );
    expect(elsewhere).toEqual([]);
  });

  it("every server action is made by the wrappers of lib/http/action.ts", () => {
    // Sign-in with a provider and sign-out only start Auth.js's redirects: no input to check, no result to return.
    const redirectsOnly = new Set(["oauthSignInAction", "signOutAction"]);
    const plain: string[] = [];
    for (const f of filesUnder("app").filter((f) => read(f).startsWith('"use server"'))) {
      for (const m of read(f).matchAll(/^export (?:async function (\w+)|const (\w+) = (\w+)\()/gm)) {
        const name = m[1] ?? m[2];
        if (m[1] && !redirectsOnly.has(name)) plain.push(`${f}: ${name}`);
        if (m[2] && !/^(userAction|adminAction|formAction|memoryAction)$/.test(m[3])) plain.push(`${f}: ${name}`);
      }
    }
    expect(plain).toEqual([]);
  });

  it("only lib/user-context.ts looks up a user's cipher: data modules are given it", () => {
    const lookups = filesUnder("lib").filter(
      (f) => f !== "lib/user-context.ts" && !f.startsWith("lib/crypto/") && /\bcipherFor(Thread)?\(/.test(read(f)),
    );
    expect(lookups).toEqual([]);
  });

  it("raw SQL is a tagged template (values bound by Prisma) with a row type", () => {
    // The batched function calls (lib/db/function-calls.ts) build one statement from typed `FunctionCall`s.
    const files = [...filesUnder("lib"), ...filesUnder("app"), ...filesUnder("testing")];
    const unsafe = files.filter(
      (f) => f !== "lib/db/function-calls.ts" && /\$(query|execute)RawUnsafe\b/.test(read(f)),
    );
    expect(unsafe).toEqual([]);
    const untyped = files.flatMap((f) =>
      [...read(f).matchAll(/\$queryRaw(?!Unsafe)(?!<)/g)].map(
        (m) => `${f}:${read(f).slice(0, m.index).split("\n").length}`,
      ),
    );
    expect(untyped).toEqual([]);
  });
});
