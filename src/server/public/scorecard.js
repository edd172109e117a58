// @ts-check
// The scorecard page of a feed (`/scorecard?feed=NAME`) or a mapping (`?mapping=NAME`): its last grade, a line chart
// of its score over its last runs drawn as inline SVG — the grade bands behind (A ≥ 90 … E below 60), one point per
// run with its grade — and the runs as a table. Data: GET /scorecards (src/server/scorecard-routes.ts).
//
// Type-checked from its JSDoc by `npm run typecheck` (tsconfig.browser.json).
/**
 * A run as `GET /scorecards` lists it.
 * @typedef {{
 *   runId: string,
 *   finishedAt: string,
 *   file: string,
 *   rows: number,
 *   score: number,
 *   grade: string,
 *   parts: Record<string, number | null>,
 *   capped: string | null,
 * }} ScorePoint
 */
(() => {
  /** @param {string} id */
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  /** @param {unknown} s */
  const esc = (s) =>
    String(s ?? '').replace(
      /[&<>"]/g,
      (c) => /** @type {Record<string, string>} */ ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c,
    );
  /** The grade bands, best first: lowest score and colour. */
  const BANDS = [
    { grade: 'A', from: 90, to: 100, fill: '#dcf5e3' },
    { grade: 'B', from: 80, to: 90, fill: '#e9f6d8' },
    { grade: 'C', from: 70, to: 80, fill: '#fbf3cf' },
    { grade: 'D', from: 60, to: 70, fill: '#fde5d3' },
    { grade: 'E', from: 0, to: 60, fill: '#fbdcd9' },
  ];
  const W = 720;
  const H = 300;
  const PAD = { left: 44, right: 24, top: 14, bottom: 40 };

  /** @param {string} iso */
  const day = (iso) => new Date(iso).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });

  /**
   * The chart: score 0–100 upwards, runs left to right in time order.
   * @param {ScorePoint[]} runs
   */
  function chart(runs) {
    const plotW = W - PAD.left - PAD.right;
    const plotH = H - PAD.top - PAD.bottom;
    const y = (/** @type {number} */ score) => PAD.top + plotH * (1 - score / 100);
    const x = (/** @type {number} */ i) => PAD.left + (runs.length === 1 ? plotW / 2 : (plotW * i) / (runs.length - 1));
    const bands = BANDS.map(
      (b) =>
        `<rect class="band" data-grade="${b.grade}" x="${PAD.left}" y="${y(b.to)}" width="${plotW}" height="${y(b.from) - y(b.to)}" fill="${b.fill}"/>` +
        `<text x="${W - PAD.right + 6}" y="${(y(b.from) + y(b.to)) / 2 + 4}" font-size="12" fill="#555">${b.grade}</text>`,
    ).join('');
    const ticks = [0, 60, 70, 80, 90, 100]
      .map(
        (t) =>
          `<text x="${PAD.left - 6}" y="${y(t) + 4}" font-size="11" text-anchor="end" fill="#555">${t}</text>` +
          `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(t)}" y2="${y(t)}" stroke="#fff" stroke-width="1"/>`,
      )
      .join('');
    const line = runs.map((r, i) => `${x(i).toFixed(1)},${y(r.score).toFixed(1)}`).join(' ');
    const points = runs
      .map(
        (r, i) =>
          `<g class="point" data-run="${esc(r.runId)}" data-score="${r.score}" data-grade="${esc(r.grade)}">` +
          `<circle cx="${x(i).toFixed(1)}" cy="${y(r.score).toFixed(1)}" r="5" fill="#1f4e79" stroke="#fff" stroke-width="1.5"/>` +
          `<text x="${x(i).toFixed(1)}" y="${(y(r.score) - 9).toFixed(1)}" font-size="11" text-anchor="middle" fill="#1f4e79">${r.score}</text>` +
          `<title>${esc(day(r.finishedAt))} · ${esc(r.file)} · score ${r.score}, grade ${esc(r.grade)}</title></g>`,
      )
      .join('');
    // Dates under the first, the last and (with room) every few points.
    const every = Math.max(1, Math.ceil(runs.length / 6));
    const labels = runs
      .map((r, i) =>
        i % every === 0 || i === runs.length - 1
          ? `<text x="${x(i).toFixed(1)}" y="${H - PAD.bottom + 18}" font-size="11" text-anchor="middle" fill="#555">${esc(day(r.finishedAt))}</text>`
          : '',
      )
      .join('');
    return (
      `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="score of the last ${runs.length} runs">` +
      `${bands}${ticks}<polyline class="score-line" points="${line}" fill="none" stroke="#1f4e79" stroke-width="2"/>` +
      `${points}${labels}</svg>`
    );
  }

  /** @param {number | null | undefined} v */
  const part = (v) => (v === null || v === undefined ? '–' : String(Math.round(v)));

  async function load() {
    const params = new URLSearchParams(location.search);
    const feed = params.get('feed');
    const mapping = params.get('mapping');
    const what = feed ? `feed ${feed}` : mapping ? `mapping ${mapping}` : '';
    $('title').textContent = `Scorecard · ${what || '?'}`;
    if (!what) {
      $('message').textContent = 'Name a feed (?feed=) or a mapping (?mapping=).';
      return;
    }
    const q = feed ? `feed=${encodeURIComponent(feed)}` : `mapping=${encodeURIComponent(mapping ?? '')}`;
    const res = await fetch(`/scorecards?${q}`).catch(() => null);
    if (!res || !res.ok) {
      $('message').textContent = 'The scorecards could not be read.';
      return;
    }
    /** @type {{ grade: string | null, score: number | null, runs: ScorePoint[] }} */
    const data = await res.json();
    const grade = $('grade');
    grade.textContent = data.grade ?? '–';
    grade.className = `grade-${data.grade ?? 'none'}`;
    if (data.runs.length === 0) {
      $('score-line').textContent = 'No run with a scorecard yet.';
      return;
    }
    $('score-line').textContent = `score ${data.score} of 100 at the last of ${data.runs.length} run(s)`;
    $('chart').innerHTML = chart(data.runs);
    $('runs').innerHTML = data.runs
      .slice()
      .reverse()
      .map(
        (r) =>
          `<tr data-run="${esc(r.runId)}"><td>${esc(day(r.finishedAt))}</td><td>${esc(r.file)}</td><td class="num">${r.rows}</td>` +
          `<td class="num">${r.score}</td><td>${esc(r.grade)}${r.capped ? ' (capped: invalid rows)' : ''}</td>` +
          `<td class="num">${part(r.parts.validity)}</td><td class="num">${part(r.parts.completeness)}</td>` +
          `<td class="num">${part(r.parts.timeliness)}</td><td class="num">${part(r.parts.stability)}</td></tr>`,
      )
      .join('');
  }
  load();
})();
