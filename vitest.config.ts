import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The kill -9 durability tests run apart: `npm run test:crash` (vitest.crash.config.ts).
    exclude: ['test/crash/**', '**/node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Test files share their worker's loaded modules (docs/decisions/0008-test-isolation.md): loading
    // the app's module graph again for each of 120 files cost about 4 of a suite's 7 minutes. A file
    // must leave no global state behind (an environment variable it needs: vi.stubEnv, then
    // vi.unstubAllEnvs in afterAll).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
