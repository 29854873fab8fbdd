import { defineConfig } from 'vitest/config';

/** `npm run test:crash`: the kill -9 durability tests, kept out of the normal suite (they take a minute or two). */
export default defineConfig({
  test: {
    include: ['test/crash/**/*.crash.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 150_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
