import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "packages/db/migrations/**", "var/**", ".scratch/**", "**/*.js", "**/*.cjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // The console's browser modules are plain JavaScript (// @ts-check); they are linted, with the
    // type information of their own tsconfig.json (DOM, not Node).
    ignores: ["!apps/api/src/console/assets/*.js"],
  },
  {
    files: ["apps/api/src/console/assets/*.js"],
    languageOptions: { sourceType: "module" },
    // Browser globals: TypeScript checks every name against the DOM library (the folder's
    // tsconfig.json, run by apps/api/test/console.test.ts), as typescript-eslint advises for typed code.
    rules: { "no-undef": "off" },
  },
  {
    files: ["**/*.test.ts", "**/test/**/*.ts", "**/bench/**/*.ts"],
    // Tests read JSON bodies and rows whose shape each assertion checks.
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
);
