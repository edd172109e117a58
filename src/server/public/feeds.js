// @ts-check
// The console's feed list, one row per feed from two endpoints: GET /feeds (the schedule and time zone, next tick, last
// success, whether it is overdue, last run) and GET /feed-sources (the source, its last listing, files seen / done /
// waiting, the last tick or source error). Refreshed every few seconds; an endpoint that does not answer (503 while
// Redis is away: the banner says so) keeps its last answer. The section stays hidden while neither lists a feed.
//
// Type-checked from its JSDoc by `npm run typecheck` (tsconfig.browser.json); the shapes are the routes'
// (docs/queue.md, "Uploads and the console"; `FeedStatus` in src/queue/feed-status.ts, src/server/feed-sources.ts).
/**
 * A feed as `GET /feeds` lists it.
 * @typedef {{
 *   id: string,
 *   schedule?: string,
 *   timezone?: string,
 *   nextTick?: string | null,
 *   lastSuccessAt?: string | null,
 *   overdue?: boolean,
 *   lastRun?: { exitCode: number, finishedAt: string } | null,
 * }} ScheduledFeed
 */
/**
 * A feed as `GET /feed-sources` lists it.
 * @typedef {{
 *   id: string,
 *   source?: string,
 *   lastListingAt?: string | null,
 *   seen?: number | null,
 *   done?: number | null,
 *   waiting?: number | null,
 *   lastTick?: string | null,
 *   lastTickError?: string | null,
 * }} FeedSource
 */
(() => {
  /** The element of the page with this id (the page has every id this script names). @param {string} id */
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  /** @param {unknown} s */
  const esc = (s) =>
    String(s ?? '').replace(
      /[&<>"]/g,
      (c) => /** @type {Record<string, string>} */ ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c,
    );
  /**
   * @param {string | null | undefined} iso
   * @param {string} [none] what to show without a time
   */
  const when = (iso, none) =>
    iso ? `<time datetime="${esc(iso)}">${esc(new Date(iso).toLocaleString())}</time>` : esc(none);
  /** @type {ScheduledFeed[]} */
  let scheduled = [];
  /** @type {FeedSource[]} */
  let sources = [];
  /** @param {ScheduledFeed} f */
  function lastRun(f) {
    if (!f.lastRun) return 'never';
    return `exit ${esc(f.lastRun.exitCode)} · ${when(f.lastRun.finishedAt)}`;
  }
  /** @param {FeedSource} s */
  function files(s) {
    if (!s || !s.lastListingAt) return 'never listed';
    const n = (/** @type {number | null | undefined} */ x) => esc(x ?? 0);
    return `seen ${n(s.seen)} · done ${n(s.done)} · waiting ${n(s.waiting)} (listed ${when(s.lastListingAt)})`;
  }
  /**
   * @param {string} id
   * @param {ScheduledFeed | undefined} f
   * @param {FeedSource | undefined} s
   */
  function row(id, f, s) {
    const overdue = f
      ? `<td data-label="overdue" class="overdue ${f.overdue ? 'err' : 'ok'}">${f.overdue ? 'yes' : 'no'}</td>`
      : '<td data-label="overdue" class="overdue"></td>';
    return `<tr data-feed="${esc(id)}"><td data-label="feed"><code>${esc(id)}</code>
      <a class="scorecard-link" href="/scorecard?feed=${encodeURIComponent(id)}">scorecard</a></td>
      <td data-label="schedule">${f ? `<code>${esc(f.schedule ?? '')}</code> ${esc(f.timezone)}` : 'not scheduled (no worker)'}</td>
      <td data-label="next tick" class="next">${f ? when(f.nextTick, 'none') : ''}</td>
      <td data-label="last success" class="success">${f ? when(f.lastSuccessAt, 'never') : ''}</td>
      ${overdue}
      <td data-label="last run">${f ? lastRun(f) : ''}</td>
      <td data-label="source" class="source">${s ? `<code>${esc(s.source)}</code>` : ''}</td>
      <td data-label="files" class="files num">${s ? files(s) : ''}</td>
      <td data-label="last tick" class="tick${s && s.lastTickError ? ' err' : ''}">${esc(s ? (s.lastTickError ?? s.lastTick ?? '') : '')}</td></tr>`;
  }
  /**
   * The `feeds` of an endpoint's answer, or null when it does not answer.
   * @param {string} url
   * @returns {Promise<any[] | null>}
   */
  async function fetchFeeds(url) {
    const res = await fetch(url).catch(() => null);
    if (!res || !res.ok) return null;
    return (await res.json()).feeds;
  }
  async function refreshFeeds() {
    const [a, b] = await Promise.all([fetchFeeds('/feeds'), fetchFeeds('/feed-sources')]);
    if (a) scheduled = a;
    if (b) sources = b;
    const ids = [...new Set([...scheduled.map((f) => f.id), ...sources.map((s) => s.id)])].sort();
    const html = ids
      .map((id) =>
        row(
          id,
          scheduled.find((f) => f.id === id),
          sources.find((s) => s.id === id),
        ),
      )
      .join('');
    $('feeds-section').hidden = ids.length === 0;
    if ($('feeds').dataset.html !== html) {
      $('feeds').dataset.html = html;
      $('feeds').innerHTML = html;
    }
  }
  refreshFeeds();
  setInterval(refreshFeeds, 5000);
})();
