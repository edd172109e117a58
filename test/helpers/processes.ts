// CLI processes a test file starts (`product-sync worker`, `serve`): each one ends with the test that started it, or
// with the file when a hook started it, whatever happened meanwhile: a failed expectation, a start that never came,
// a hook that timed out while it was still starting its process (that process is killed as soon as it exists).
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeEach } from 'vitest';
import { spawnCli, type CliOptions, type CliProcess } from './cli.ts';
import { sleep } from './wait.ts';

/** A started process, and all it printed so far (stdout and stderr, as they came). */
export interface TestProcess extends CliProcess {
  output(): string;
}

export interface TestProcesses {
  /** `product-sync <args>` as a process, killed (SIGKILL) at the end of its test, or of the file. */
  spawn(args: string[], options?: CliOptions): TestProcess;
  /**
   * `product-sync worker --jobs-dir <jobsDir>`, once it printed `worker started` (a process that exits first, or
   * does not start within `startMs`, is killed and the call throws with its output).
   */
  worker(jobsDir: string, options?: CliOptions & { startMs?: number }): Promise<TestProcess>;
}

/** What the tests of a file start: call once at the top of the file (it registers the hooks that end them). */
export function useProcesses(): TestProcesses {
  const ofFile = new Set<ChildProcess>();
  const ofTest = new Set<ChildProcess>();
  let inTest = false;
  let closed = false;
  const end = async (children: Set<ChildProcess>): Promise<void> => {
    const ends = [...children].map((c) => (c.exitCode === null && c.signalCode === null ? exited(c) : undefined));
    for (const c of children) c.kill('SIGKILL');
    children.clear();
    await Promise.all(ends);
  };
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    await end(ofTest);
  });
  afterAll(async () => {
    closed = true;
    await end(ofFile);
  });
  // The test process itself ending (vitest stopping a file early): its children go with it.
  process.once('exit', () => {
    for (const c of [...ofFile, ...ofTest]) c.kill('SIGKILL');
  });

  const spawn = (args: string[], options: CliOptions = {}): TestProcess => {
    const p = spawnCli(args, options);
    if (closed) p.child.kill('SIGKILL');
    else (inTest ? ofTest : ofFile).add(p.child);
    return { ...p, output: () => p.out.stdout + p.out.stderr };
  };

  const worker = async (jobsDir: string, options: CliOptions & { startMs?: number } = {}): Promise<TestProcess> => {
    const p = spawn(['worker', '--jobs-dir', jobsDir], options);
    const t0 = Date.now();
    while (!p.output().includes('worker started')) {
      if (p.child.exitCode !== null || p.child.signalCode !== null || Date.now() - t0 > (options.startMs ?? 30_000)) {
        p.child.kill('SIGKILL');
        throw new Error(`the worker did not start (exit ${p.child.exitCode ?? p.child.signalCode}): ${p.output()}`);
      }
      await sleep(20);
    }
    return p;
  };

  return { spawn, worker };
}

const exited = (c: ChildProcess): Promise<void> => new Promise((resolve) => c.once('exit', () => resolve()));

/** The port `product-sync serve` says it listens on, once it said so; null when it exited first. */
export async function servePort(p: TestProcess, ms = 30_000): Promise<number | null> {
  const t0 = Date.now();
  for (;;) {
    const m = /console on http:\/\/\S+:(\d+)\//.exec(p.out.stdout);
    if (m) return Number(m[1]);
    if (p.child.exitCode !== null || p.child.signalCode !== null) return null;
    if (Date.now() - t0 > ms) throw new Error(`the console did not start: ${p.output()}`);
    await sleep(20);
  }
}
