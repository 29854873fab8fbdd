import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { localRules } from './eslint.local-rules.js';

/*
 * The layer rules of docs/architecture.md, checked on every `npm run check`:
 * - plumbing (auth, cli, db, http, idempotency, lib, net, outbox, workers) never imports a
 *   resource module: the composition root (app.ts, main/, modules/index.ts) wires them together;
 * - a module reaches another only through that module's index.ts;
 * - routes never import queries: they call the service;
 * - no file outside src/modules/webhooks names a webhook table (db/schema.ts and migrations aside);
 * - code that serves requests or runs in a module never calls `notify`: wake-ups are registered with
 *   scope.afterCommit where the work is queued (eslint.local-rules.js).
 */
const PLUMBING = ['auth', 'cli', 'db', 'http', 'idempotency', 'lib', 'net', 'outbox', 'workers'];
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
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/modules/webhooks/**', 'src/db/schema.ts', 'src/db/migrations/**'],
    plugins: { aps: localRules },
    rules: { 'aps/no-webhook-tables': 'error' },
  },
  {
    files: ['src/app.ts', 'src/http/**/*.ts', 'src/modules/**/*.{ts,tsx}'],
    plugins: { aps: localRules },
    rules: { 'aps/no-notify': 'error' },
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
