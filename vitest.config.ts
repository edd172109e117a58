import { defineConfig } from 'vitest/config';

// Two projects, run at the same time on three workers in all (vitest wants one worker count per group; the unit
// files compute while the process files wait on what they started). test/README.md says which a new test joins:
// - unit: in-process tests (a loopback server or the suite's Redis at most), CPU-bound;
//   its files share each worker's modules (isolate: false: a file's modules are loaded once per worker, not once per
//   file), so a unit test leaves no state behind: it restores the environment, spies and settings it changes;
// - process: tests that start processes (the CLI, redis-server, sshd, s3rver) and mostly wait on them. A process
//   that must keep going runs on the default lease and job lock (no load lets them lapse); a paused or killed one's
//   takeover is forced by the test (test/helpers/takeover.ts), never raced against a short lock.
/** Unit-level files that start a node process of their own (a script under tsx, the CLI). */
const SPAWNING = ['test/journal-replay.test.ts', 'test/terminal-output.test.ts', 'test/lease-file.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Logs go to stderr as JSON; tests want only warnings and errors there.
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/*.test.ts'],
          exclude: SPAWNING,
          maxWorkers: 3,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: ['test/integration/**/*.test.ts', ...SPAWNING],
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
