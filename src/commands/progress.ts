import type { RunProgress } from '../pipeline/run/run.ts';

/**
 * A progress display: one redrawn line on a TTY (rows read, operations sent, errors), a plain line every few seconds
 * otherwise.
 */
export function progressReporter(stream: NodeJS.WriteStream = process.stderr): {
  update: (p: RunProgress) => void;
  done: () => void;
} {
  let last = 0;
  let drawn = false;
  const render = (p: RunProgress) => {
    const total = p.rowsTotal ? `/${p.rowsTotal}` : '';
    return `[${p.stage}] rows read ${p.rowsRead}${total} · operations sent ${p.operationsSent}${total} · writes ${p.writes ?? 0} · errors ${p.errors}`;
  };
  return {
    update(p) {
      const now = Date.now();
      if (stream.isTTY) {
        if (now - last < 100) return;
        last = now;
        const width = stream.columns ?? 100;
        const ratio = p.rowsTotal ? Math.min(1, p.operationsSent / p.rowsTotal) : 0;
        const barWidth = 20;
        const bar = p.stage === 'push' ? ` [${'#'.repeat(Math.round(ratio * barWidth)).padEnd(barWidth, '.')}]` : '';
        stream.write(`\r${(render(p) + bar).slice(0, width - 1).padEnd(Math.min(width - 1, 100))}`);
        drawn = true;
      } else if (now - last >= 1000) {
        last = now;
        stream.write(`${render(p)}\n`);
      }
    },
    done() {
      if (drawn) stream.write('\n');
    },
  };
}
