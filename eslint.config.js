import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './lint/layer-rules.js';

/*
 * The layer rules of docs/architecture.md, checked on every `npm run check`:
 * - plumbing (auth, cli, db, http, idempotency, lib, llm, metrics, net, outbox, workers) never imports a
 *   resource module: the composition root (app.ts, main/, modules/index.ts) wires them together;
 * - a module reaches another only through that module's index.ts;
 * - routes never import queries: they call the service; and routes are registered only in
 *   `*.routes.ts` files, so no route escapes that rule (lint/layer-rules.js, reading types);
 * - engine branches (SQLite vs PostgreSQL) live in db/dialect.ts and the few places listed below
 *   (lint/layer-rules.js, reading types);
 * - no file outside src/modules/webhooks names a webhook table (db/schema.ts and migrations aside);
 * - code that serves requests or runs in a module never calls `notify`: wake-ups are registered with
 *   scope.afterCommit where the work is queued (lint/layer-rules.js).
 */
const PLUMBING = ['auth', 'cli', 'db', 'http', 'idempotency', 'lib', 'llm', 'metrics', 'net', 'outbox', 'workers'];
const plumbingNeverImportsModules = {
  regex: '(^|/)modules(/|$)',
  message: 'Plumbing never imports a resource module; let the composition root (app.ts, main/) pass what it needs.',
};
const onlyThroughIndex = {
  // `../<module>/<file>` from inside a module, unless the file is the module's index.js.
  regex: '^\\.\\./[^./][^/]*/(?!index\\.js$)[^/]+$',
  message: 'Reach another module only through its index.ts (export what it needs there).',
};
const routesNeverImportQueries = {
  regex: '\\.queries\\.js$',
  message: 'Routes call the service; SQL lives behind it.',
};

// ---- Rules that read types (typed linting: lint/layer-rules.js) ----
const APP_CODE = ['src/**/*.ts', 'src/**/*.tsx'];
const TESTS = ['**/*.test.ts', '**/*.test.tsx'];
/** Files that may register routes besides `*.routes.ts`, and why. */
const ROUTES_ALSO_IN = {
  'src/app.ts': "the composition root: registers the modules' route plugins and the service's own endpoints",
};
/** The places that may branch on the engine, and why; everywhere else calls a function of db/dialect.ts. */
const ENGINE_BRANCHES_IN = {
  'src/db/dialect.ts': 'the one place that writes SQL and runs transactions differently per engine',
  'src/db/connect.ts': 'opens either engine and makes both answer alike',
  'src/db/sqlite-adapter.ts': "SQLite's driver adapter",
  'src/db/pg-adapter.ts': "PostgreSQL's driver adapter",
  'src/db/migrations/**': 'frozen DDL, written for each engine',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        performance: 'readonly',
        URL: 'readonly',
        NodeJS: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': ['error', { ignoreRestArgs: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-object-type': 'off',
      'no-console': 'error',
    },
  },
  {
    // The page runtime's script runs in visitors' browsers, not in Node.
    files: ['src/modules/site/static/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        fetch: 'readonly',
        setInterval: 'readonly',
        addEventListener: 'readonly',
        Promise: 'readonly',
      },
    },
  },
  {
    // The console's script runs in its users' browsers (issue 28).
    files: ['src/modules/console/static/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        fetch: 'readonly',
        Element: 'readonly',
        HTMLFormElement: 'readonly',
        HTMLElement: 'readonly',
        FormData: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
  {
    files: PLUMBING.map((dir) => `src/${dir}/**/*.ts`),
    rules: { 'no-restricted-imports': ['error', { patterns: [plumbingNeverImportsModules] }] },
  },
  {
    files: ['src/modules/*/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [onlyThroughIndex] }] },
  },
  {
    files: ['src/modules/*/**/*.routes.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [onlyThroughIndex, routesNeverImportQueries] }] },
  },
  {
    files: APP_CODE,
    ignores: TESTS,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { layers },
  },
  {
    files: APP_CODE,
    ignores: [...TESTS, '**/*.routes.ts', ...Object.keys(ROUTES_ALSO_IN)],
    rules: { 'layers/routes-in-route-files': 'error' },
  },
  {
    files: APP_CODE,
    ignores: [...TESTS, ...Object.keys(ENGINE_BRANCHES_IN)],
    rules: { 'layers/engine-branches-in-dialect': 'error' },
  },
  {
    // These two read names, not types: tests are held to them as well.
    files: APP_CODE,
    ignores: ['src/modules/webhooks/**', 'src/db/schema.ts', 'src/db/migrations/**'],
    plugins: { layers },
    rules: { 'layers/no-webhook-tables': 'error' },
  },
  {
    files: ['src/app.ts', 'src/http/**/*.ts', 'src/modules/**/*.{ts,tsx}'],
    plugins: { layers },
    rules: { 'layers/no-notify': 'error' },
  },
  {
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['scripts/**', 'bench/**', 'test/**', '**/*.test.ts'],
    rules: { 'no-console': 'off' },
  },
);
