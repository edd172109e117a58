// Running the CLI from a test: as a process (bin/product-sync.mjs over dist/, built by the global setup) where the
// process itself is under test — exit on a signal, a crash, a hang, what stays in the process's memory, its logs —
// and in-process (src/cli.ts `main`) where only a command's output and exit code are.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point, the file `npm install -g` links. */
export const BIN = fileURLToPath(new URL('../../bin/product-sync.mjs', import.meta.url));

/** How a command ended: exit code (null when killed by a signal), its whole output, how long it took. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The command was still running after `timeoutMs` (the process was killed; an in-process run was abandoned). */
  killed: boolean;
}

export interface CliOptions {
  /** Added to (or overriding) the test process's environment. */
  env?: Record<string, string>;
  /** Names removed from the environment (a value set by the shell or by `env` of the test config). */
  unset?: string[];
  cwd?: string;
  /** A command running longer is killed (a hang is a failure, not a stuck suite). Default: never (in-process: 60 s). */
  timeoutMs?: number;
}

/** A command started as a process: its output so far (`out`, `stderr()`), and its end. */
export interface CliProcess {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  stderr(): string;
  exit: Promise<CliResult>;
}

function environment(options: CliOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  for (const name of options.unset ?? []) delete env[name];
  return env;
}

/** Starts `product-sync <args>` as a node process; `exit` resolves once it has exited and its output is drained. */
export function spawnCli(args: string[], options: CliOptions = {}): CliProcess {
  const t0 = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: environment(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  let killed = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  return {
    child,
    out,
    stderr: () => out.stderr,
    // 'close': the process has exited and its pipes are drained (its last lines included).
    exit: new Promise((resolve) =>
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, ...out, ms: Date.now() - t0, killed });
      }),
    ),
  };
}

/** The CLI started with `env` (spawnCli's `env`): what the tests of runs across processes start. */
export const spawnWithEnv = (args: string[], env: Record<string, string>): CliProcess => spawnCli(args, { env });

/** Runs `product-sync <args>` as a node process to its end. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return spawnCli(args, options).exit;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `product-sync <args>` in this process (src/cli.ts `main`, the function bin/product-sync.mjs calls): the same
 * exit code and the same lines on stdout and stderr as the process, without starting node and loading the modules
 * again. For tests of a command's output and exit code; not for signals, crashes, memory, logs (the logger writes to
 * file descriptor 2 directly and keeps the level of the test process) or `--sandbox` servers left open. Calls run one
 * at a time: the environment, the working directory and the output streams are the process's own while one runs.
 */
export function cliInProcess(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const run = queue.then(() => runInProcess(args, options));
  queue = run.catch(() => undefined);
  return run;
}

async function runInProcess(args: string[], options: CliOptions): Promise<CliResult> {
  const { main } = await import('../../src/cli.ts');
  const t0 = Date.now();
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const write = { stdout: process.stdout.write, stderr: process.stderr.write };
  const out = { stdout: '', stderr: '' };
  const capture =
    (stream: 'stdout' | 'stderr') =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      out[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  const env = environment(options);
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  if (options.cwd) process.chdir(options.cwd);
  process.stdout.write = capture('stdout') as typeof process.stdout.write;
  process.stderr.write = capture('stderr') as typeof process.stderr.write;
  let timer: NodeJS.Timeout | undefined;
  try {
    const ended = await Promise.race([
      main(args).then((code) => ({ code, killed: false })),
      new Promise<{ code: null; killed: true }>((resolve) => {
        timer = setTimeout(() => resolve({ code: null, killed: true }), options.timeoutMs ?? 60_000);
      }),
    ]);
    return { ...ended, ...out, ms: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
    if (options.cwd) process.chdir(savedCwd);
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
  }
}
