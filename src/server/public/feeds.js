// The console's feed list (GET /feeds): each feed's schedule and time zone, its next tick, last success and whether it
// is overdue, refreshed every few seconds. The section stays hidden while no worker has scheduled a feed.
(() => {
  const $ = (id) => document.getElementById(id);
  const esc = (s) =>
    String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  const when = (iso, none) =>
    iso ? `<time datetime="${esc(iso)}">${esc(new Date(iso).toLocaleString())}</time>` : esc(none);
  function lastRun(f) {
    if (!f.lastRun) return 'never';
    return `exit ${esc(f.lastRun.exitCode)} · ${when(f.lastRun.finishedAt)}`;
  }
  function row(f) {
    return `<tr data-feed="${esc(f.id)}"><td data-label="feed"><code>${esc(f.id)}</code></td>
      <td data-label="schedule"><code>${esc(f.schedule ?? '')}</code> ${esc(f.timezone)}</td>
      <td data-label="next tick" class="next">${when(f.nextTick, 'none')}</td>
      <td data-label="last success" class="success">${when(f.lastSuccessAt, 'never')}</td>
      <td data-label="overdue" class="overdue ${f.overdue ? 'err' : 'ok'}">${f.overdue ? 'yes' : 'no'}</td>
      <td data-label="last run">${lastRun(f)}</td></tr>`;
  }
  async function refreshFeeds() {
    const res = await fetch('/feeds').catch(() => null);
    // 503 while Redis is away: the banner says so; the last list stays.
    if (!res || !res.ok) return;
    const { feeds } = await res.json();
    const html = feeds.map(row).join('');
    $('feeds-section').hidden = feeds.length === 0;
    if ($('feeds').dataset.html !== html) {
      $('feeds').dataset.html = html;
      $('feeds').innerHTML = html;
    }
  }
  refreshFeeds();
  setInterval(refreshFeeds, 5000);
})();
