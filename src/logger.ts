import { writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';

/** How log lines look: one JSON object per line, or readable lines for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The log format: `LOG_FORMAT=json` or `pretty` when set; otherwise readable lines when stderr is a terminal and JSON
 * when it is not (a file, a pipe, a container's log collector).
 */
export function logFormat(env: Record<string, string | undefined> = process.env, isTTY: boolean = Boolean(process.stderr.isTTY)): LogFormat {
  const f = env.LOG_FORMAT?.trim().toLowerCase();
  if (f === 'json' || f === 'pretty') return f;
  return isTTY ? 'pretty' : 'json';
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
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
  const fields = Object.entries(o).filter(([k]) => !HIDDEN.has(k)).map(([k, v]) => `${k}=${fieldText(v)}`);
  const err = o.err as { message?: string; stack?: string } | string | undefined;
  if (typeof err === 'string') fields.push(`err=${fieldText(err)}`);
  const head = `${time} ${color ? `\x1b[${LEVEL_COLORS[level] ?? '0'}m${name}\x1b[0m` : name} ${String(o.msg ?? '')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}`;
  if (err && typeof err === 'object') return `${head}\n    ${(err.stack ?? err.message ?? JSON.stringify(err)).split('\n').join('\n    ')}`;
  return head;
}

/** A pino destination writing readable lines to `fd` synchronously (so they never interleave with a table being printed). */
export function prettyDestination(fd = 2, color = false): DestinationStream {
  return {
    write(line: string) {
      writeSync(fd, `${prettyLine(line, color)}\n`);
    },
  };
}

/** Builds a logger of the given format on `fd` (the process has one, {@link logger}; tests build their own). */
export function createLogger(options: { format: LogFormat; level?: string; fd?: number; color?: boolean }): Logger {
  const fd = options.fd ?? 2;
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: 'product-sync' },
      redact: {
        paths: ['token', 'apiToken', 'clientSecret', 'authorization', 'headers.authorization', 'config.apiToken', 'config.apiClientSecret'],
        censor: '[redacted]',
      },
    },
    options.format === 'pretty' ? prettyDestination(fd, options.color ?? false) : pino.destination({ fd, sync: true }),
  );
}

/**
 * The one root logger; runs and jobs log through `logger.child({ runId, jobId, stage })`. Credentials are redacted.
 * Readable lines on a terminal, JSON otherwise (LOG_FORMAT decides when set; LOG_LEVEL sets the level).
 */
export const logger: Logger = (() => {
  const format = logFormat();
  return createLogger({ format, level: process.env.LOG_LEVEL ?? 'info', color: format === 'pretty' && Boolean(process.stderr.isTTY) && !process.env.NO_COLOR });
})();

export type { Logger };
