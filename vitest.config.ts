import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Logs go to stderr as JSON; tests want only warnings and errors there.
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  },
});
