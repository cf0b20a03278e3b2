// ESLint: Next.js's rules (React, hooks, accessibility, Core Web Vitals) and
// typescript-eslint's recommended set, plus no import cycles anywhere in lib/
// (a cycle makes a module's exports undefined depending on who loads it first).
import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([".next/**", ".cache/**", ".tmp/**", "lib/generated/**", "data/**", "data-*/**", "test-results/**"]),
  {
    rules: {
      // `_name` marks a value left unused on purpose (a destructured field dropped, a required parameter).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["lib/**/*.ts"],
    rules: { "import/no-cycle": ["error", { ignoreExternal: true }] },
  },
]);
