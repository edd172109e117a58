import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { stderrLiveLine, type LiveLine } from './terminal.ts';

// pino is loaded when a logger is built (see {@link logger}: a command that logs nothing never loads it).
const loadPino = (): typeof Pino => createRequire(import.meta.url)('pino') as typeof Pino;

/** How log lines look: one JSON object per line, or readable lines for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The log format: `LOG_FORMAT=json` or `pretty` when set; otherwise readable lines when stderr is a terminal and JSON
 * when it is not (a file, a pipe, a container's log collector).
 */
export function logFormat(
  env: Record<string, string | undefined> = process.env,
  isTTY: boolean = Boolean(process.stderr.isTTY),
): LogFormat {
  const f = env.LOG_FORMAT?.trim().toLowerCase();
  if (f === 'json' || f === 'pretty') return f;
  return isTTY ? 'pretty' : 'json';
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '36', 40: '33', 50: '31', 60: '41;97' };
// Fields every line has (or that only machines need): left out of the readable line.
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'app', 'err']);

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/** One pino JSON line as a readable line: `14:03:07 INFO  message  key=value …`, an error's stack indented below. */
export function prettyLine(json: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.replace(/\n$/, '');
  }
  const level = typeof o.level === 'number' ? o.level : 30;
  const name = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const time = typeof o.time === 'number' ? new Date(o.time).toTimeString().slice(0, 8) : '';
  const fields = Object.entries(o)
    .filter(([k]) => !HIDDEN.has(k))
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  const err = o.err as { message?: string; stack?: string } | string | undefined;
  if (typeof err === 'string') fields.push(`err=${fieldText(err)}`);
  const head = `${time} ${color ? `\x1b[${LEVEL_COLORS[level] ?? '0'}m${name}\x1b[0m` : name} ${String(o.msg ?? '')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}`;
  if (err && typeof err === 'object')
    return `${head}\n    ${(err.stack ?? err.message ?? JSON.stringify(err)).split('\n').join('\n    ')}`;
  return head;
}

/**
 * A pino destination writing readable lines to `fd` synchronously (so they never interleave with a table being
 * printed), or above the progress line of `live` (its stream's progress line is cleared and redrawn around them).
 */
export function prettyDestination(fd = 2, color = false, live?: LiveLine): DestinationStream {
  return {
    write(line: string) {
      const text = `${prettyLine(line, color)}\n`;
      if (live) live.above(text);
      else writeSync(fd, text);
    },
  };
}

/**
 * Builds a logger of the given format on `fd` (the process has one, {@link logger}; tests build their own). On stderr
 * its lines go through the process's live line: on a TTY they are written above the progress line, never into it.
 */
export function createLogger(options: {
  format: LogFormat;
  level?: string;
  fd?: number;
  color?: boolean;
  live?: LiveLine;
}): Logger {
  const fd = options.fd ?? 2;
  const live = options.live ?? (fd === 2 ? stderrLiveLine() : undefined);
  const { pino } = loadPino();
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: 'product-sync' },
      redact: {
        paths: [
          'token',
          'apiToken',
          'clientSecret',
          'authorization',
          'headers.authorization',
          'config.apiToken',
          'config.apiClientSecret',
        ],
        censor: '[redacted]',
      },
    },
    options.format === 'pretty'
      ? prettyDestination(fd, options.color ?? false, live)
      : // JSON on a terminal meets the progress line too; elsewhere pino's own destination (no progress line there).
        live?.tty
        ? { write: (line: string) => live.above(line) }
        : pino.destination({ fd, sync: true }),
  );
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const LEVEL_VALUES: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/**
 * A logger that builds the real one (`make`, which loads pino) only when it is needed: a line at a level `level` lets
 * through, a child, or anything else asked of it. A line below `level` costs nothing and loads nothing.
 */
export function lazyLogger(make: () => Logger, level: string): Logger {
  let real: Logger | undefined;
  const load = (): Logger => (real ??= make());
  const threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES.info!;
  const own: Record<string, unknown> = {
    child: (...args: Parameters<Logger['child']>) => load().child(...args),
    isLevelEnabled: (l: string) => (real ? real.isLevelEnabled(l) : (LEVEL_VALUES[l] ?? 0) >= threshold),
  };
  for (const name of LEVELS) {
    own[name] =
      LEVEL_VALUES[name]! < threshold
        ? () => undefined
        : (...args: unknown[]) => (load()[name] as (...a: unknown[]) => void)(...args);
  }
  // Whatever else a Logger offers (level, bindings, flush…) is the real logger's.
  return new Proxy(own, {
    get(target, prop) {
      if (Object.hasOwn(target, prop)) return target[prop as string];
      const r = load();
      const v: unknown = Reflect.get(r, prop, r);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(r) : v;
    },
  }) as unknown as Logger;
}

/**
 * The one root logger; runs and jobs log through `logger.child({ runId, jobId, stage })`. Credentials are redacted.
 * Readable lines on a terminal, JSON otherwise (LOG_FORMAT decides when set; LOG_LEVEL sets the level). pino is loaded
 * with the first line written at that level (or the first child): a `validate` at LOG_LEVEL=warn never loads it.
 */
export const logger: Logger = (() => {
  const format = logFormat();
  const level = process.env.LOG_LEVEL ?? 'info';
  return lazyLogger(
    () =>
      createLogger({
        format,
        level,
        color: format === 'pretty' && Boolean(process.stderr.isTTY) && !process.env.NO_COLOR,
      }),
    level,
  );
})();

export type { Logger };
