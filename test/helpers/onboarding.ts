// A newcomer's first commands, as the onboarding tests run them: the CLI in a fresh working directory, no Redis and
// no configured API (only --sandbox reaches one), and what the run reported.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cliInProcess, type CliResult } from './cli.ts';
import { reportRows } from './sandbox.ts';

/** The CLI (in-process) in `cwd`, without Redis or any configured API. */
export const cliIn = (cwd: string, args: string[]): Promise<CliResult> =>
  cliInProcess(args, {
    cwd,
    unset: ['PRODUCT_API_URL', 'REFERENCE_API_URL', 'API_TOKEN', 'REDIS_URL', 'OWNER_COMPANY_ID', 'REPORT_DIR'],
    env: { LOG_LEVEL: 'error' },
  });

/** The outcome column of the run's rows.csv (the run directory is the only one under `<cwd>/reports`). */
export function outcomesIn(cwd: string): string[] {
  const runs = readdirSync(join(cwd, 'reports')).filter((d) => !d.startsWith('.'));
  expect(runs).toHaveLength(1);
  return reportRows(join(cwd, 'reports', runs[0]!)).map((l) => l[2]!);
}
