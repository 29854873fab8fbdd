import { defineConfig } from 'vitest/config';

/** `npm run test:crash`: the kill -9 durability tests, kept out of the normal suite (they take a minute or two). */
export default defineConfig({
  test: {
    include: ['test/crash/**/*.crash.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // A server start takes a second on a quiet machine, twenty under heavy load: room for both.
    testTimeout: 240_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
