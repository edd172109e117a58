import type { RunProgress } from '../pipeline/run/run.ts';
import { stderrLiveLine, type LiveLine } from '../terminal.ts';

/**
 * A progress display: one redrawn line on a TTY (rows read, operations sent, errors) that log lines are written above
 * (src/terminal.ts), a plain line every few seconds otherwise.
 */
export function progressReporter(
  line: LiveLine = stderrLiveLine(),
  columns: () => number | undefined = () => process.stderr.columns,
): {
  update: (p: RunProgress) => void;
  done: () => void;
} {
  let last = 0;
  const render = (p: RunProgress) => {
    const total = p.rowsTotal ? `/${p.rowsTotal}` : '';
    const a = p.api;
    const api = a
      ? ` · API ${a.concurrencyLimit} at once${a.rate === null ? '' : `, ${a.rate}/s`}, ${a.refusals} refused${a.latencyMs === null ? '' : `, ${a.latencyMs} ms`}`
      : '';
    return `[${p.stage}] rows read ${p.rowsRead}${total} · operations sent ${p.operationsSent}${total} · writes ${p.writes ?? 0} · errors ${p.errors}${api}`;
  };
  return {
    update(p) {
      const now = Date.now();
      if (line.tty) {
        if (now - last < 100) return;
        last = now;
        // 0 from a pseudo-terminal that was given no size: as unknown.
        const width = columns() || 100;
        const ratio = p.rowsTotal ? Math.min(1, p.operationsSent / p.rowsTotal) : 0;
        const barWidth = 20;
        const bar = p.stage === 'push' ? ` [${'#'.repeat(Math.round(ratio * barWidth)).padEnd(barWidth, '.')}]` : '';
        // Narrower than the terminal: a line that wraps could no longer be redrawn in place.
        line.status((render(p) + bar).slice(0, width - 1));
      } else if (now - last >= 1000) {
        last = now;
        line.above(`${render(p)}\n`);
      }
    },
    done() {
      line.end();
    },
  };
}
