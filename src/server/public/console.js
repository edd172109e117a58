// @ts-check
// The console's run list and run page (index.html): uploads, the runs and their progress, a run's issues and reports,
// re-run and undo (docs/undo.md), dead events, the Redis banner. Plain browser JavaScript, no build step; type-checked
// from its JSDoc types by `npm run typecheck` (tsconfig.browser.json) and linted by eslint. The routes it calls:
// docs/queue.md, "Uploads and the console".

/**
 * A run as `GET /runs` and `GET /runs/:id` show it (`ApiRun` in src/server/runs.ts).
 * @typedef {{
 *   id: string,
 *   fileName: string,
 *   feed?: string | null,
 *   mapping: string,
 *   scope?: { text: string, items: number | null, active: number | null } | null,
 *   withheld?: Withheld | null,
 *   queuedAt: string,
 *   startedAt: string | null,
 *   finishedAt: string | null,
 *   status: string,
 *   progress: Progress | null,
 *   counts: { created: number, updated: number, unchanged: number, invalid: number, failed: number } | null,
 *   exitCode: number | null,
 *   issues: IssueLine[],
 *   issueLines: number,
 *   reason: string | null,
 *   files: string[],
 *   reportDir: string | null,
 *   rerun: string | null,
 *   held?: Held | null,
 *   apply?: string | null,
 * }} Run
 */
/**
 * Why a run's quality gate held it (docs/mapping.md "Quality gates"): the gate, the share of invalid rows measured, the
 * gate's rules that failed and on how many rows.
 * @typedef {{
 *   gate: { maxInvalidShare?: number, rules?: string[] },
 *   rows: number,
 *   invalidRows: number,
 *   invalidShare: number,
 *   ruleRows: Record<string, number>,
 *   message: string,
 * }} Held
 */
/**
 * What a full run withheld from archiving (docs/scopes.md): rows whose key could not be read, and the items each
 * stands for.
 * @typedef {{
 *   message: string,
 *   rows: { row: number, value: string | null, reason: string, items: number,
 *     withheld: { gtin?: string | null, tradeItemId?: string }[] }[],
 * }} Withheld
 */
/**
 * A run's progress as its job reports it (docs/queue.md, "Topology": Progress).
 * @typedef {{
 *   stage?: string,
 *   waitingFor?: string,
 *   since?: string,
 *   rowsRead?: number,
 *   rowsTotal?: number,
 *   operationsSent?: number,
 *   errors?: number,
 *   ahead?: number,
 *   next?: 'running' | 'in line' | 'held back',
 * }} Progress
 */
/**
 * A line of the issue breakdown (docs/reports.md, "Issue breakdown").
 * @typedef {{
 *   code: string,
 *   severity: string,
 *   column: string | null,
 *   field: string | null,
 *   rows: number,
 *   firstRows: number[],
 *   values: { value: string, rows: number }[],
 * }} IssueLine
 */
/**
 * Undo counts (docs/undo.md, "Its report").
 * @typedef {{ items: number, restored: number, conflict: number, unchanged: number, failed: number }} UndoCounts
 */
/**
 * An item of an undo plan (`GET /runs/:id/undo-plan`).
 * @typedef {{
 *   gtin: string | null,
 *   outcome: string,
 *   action?: string,
 *   message?: string,
 *   conflicts: { field: string, before: unknown, sent: unknown, now: unknown }[],
 * }} UndoItem
 */
/**
 * A dead event (`GET /events/dead`; docs/operations.md).
 * @typedef {{
 *   id: string,
 *   jobId: string,
 *   type: string,
 *   url?: string,
 *   endpoint?: string,
 *   attempts: number,
 *   failedAt: string | null,
 *   failedReason: string,
 * }} DeadEvent
 */
(() => {
  /** The element of the page with this id (the page has every id this script names). @param {string} id */
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  /** @param {string} id */
  const $input = (id) => /** @type {HTMLInputElement} */ ($(id));
  /** @param {unknown} s */
  const esc = (s) =>
    String(s ?? '').replace(
      /[&<>"]/g,
      (c) => /** @type {Record<string, string>} */ ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c,
    );
  const PAGE = 50;
  let pages = 1;
  /**
   * The run whose section is open (its id: the same from queued to done).
   * @type {string | null}
   */
  let shown = null;
  async function loadMappings() {
    /** @type {{ mappings: string[] }} */
    const { mappings } = await (await fetch('/mappings')).json();
    $('mapping').innerHTML = mappings.map((m) => `<option>${esc(m)}</option>`).join('');
  }
  /** @param {string | null | undefined} iso */
  const when = (iso) => (iso ? `<time datetime="${esc(iso)}">${esc(new Date(iso).toLocaleString())}</time>` : '');
  /**
   * @param {Run} r
   * @param {string} f
   */
  const fileUrl = (r, f) => `/runs/${encodeURIComponent(r.id)}/files/${f}`;
  /** @param {Run} r */
  function outcome(r) {
    if (!r.counts) return r.reason ? `<span class="err">${esc(r.reason)}</span>` : '';
    const c = r.counts;
    return `<span class="${r.exitCode === 0 ? 'ok' : 'err'}">created ${c.created} · updated ${c.updated} · unchanged ${c.unchanged} · invalid ${c.invalid} · failed ${c.failed} (exit ${r.exitCode})</span>`;
  }
  /** @param {Progress | null} p */
  function progressText(p) {
    if (!p || !p.stage) return '';
    if (p.stage === 'waiting') return `waiting for the owner's lease: ${p.waitingFor} (since ${p.since})`;
    // Its turn (docs/queue.md, "Fairness"): the runs, or chunks, a worker takes before it.
    if (p.stage === 'queued') return `waiting for its turn: ${p.ahead ?? 0} run(s) ahead`;
    const sent = p.rowsTotal ? ` · ${p.operationsSent ?? 0}/${p.rowsTotal} sent` : '';
    const line =
      p.next === 'in line'
        ? ` · next chunk waits its turn: ${p.ahead ?? 0} chunk(s) ahead`
        : p.next === 'held back'
          ? ' · next chunk held back (owner cap or retry)'
          : '';
    return `${p.stage} · ${p.rowsRead} rows${sent}${p.errors ? ` · ${p.errors} errors` : ''}${line}`;
  }
  /** @param {Run} r */
  function files(r) {
    return ['rows.csv', 'rows.xlsx', 'rejected.xlsx', 'summary.json']
      .filter((f) => r.files.includes(f))
      .map((f) => `<a href="${fileUrl(r, f)}">${f}</a>`)
      .join(' ');
  }
  /** @param {Run} r */
  function row(r) {
    return `<tr data-run="${esc(r.id)}"><td data-label="file"><a href="#run=${encodeURIComponent(r.id)}" class="open">${esc(r.fileName)}</a></td>
    <td data-label="feed · mapping" class="source">${esc(r.feed ? `${r.feed} · ${r.mapping}` : r.mapping)}</td>
    <td data-label="status" class="status">${esc(r.status)}</td><td data-label="queued">${when(r.queuedAt)}</td>
    <td data-label="started">${when(r.startedAt)}</td><td data-label="finished">${when(r.finishedAt)}</td>
    <td data-label="progress" class="progress">${esc(progressText(r.progress))}</td><td data-label="outcome" class="outcome">${outcome(r)}</td>
    <td data-label="reports" class="files">${files(r)}</td></tr>`;
  }
  /** @param {Run} r */
  function issueTable(r) {
    if (r.issues.length === 0) return r.counts ? '<p>No issues.</p>' : '';
    const more =
      r.issueLines > r.issues.length
        ? ` (the first ${r.issues.length} of ${r.issueLines}: <a href="${fileUrl(r, 'issues.csv')}">issues.csv</a> has them all)`
        : '';
    return `<h3>Issues, errors first, then most rows${more}</h3>
    <table class="stack" id="issues"><thead><tr><th>rows</th><th>issue</th><th>column</th><th>field</th><th>first rows</th><th>frequent values</th></tr></thead><tbody>
    ${r.issues
      .map(
        (
          i,
        ) => `<tr><td data-label="rows" class="num">${i.rows}</td><td data-label="issue"><code>${esc(i.code)}</code> ${esc(i.severity)}</td>
      <td data-label="column">${esc(i.column ?? '(whole row)')}</td><td data-label="field">${esc(i.field)}</td>
      <td data-label="first rows">${esc(i.firstRows.join(', '))}</td>
      <td data-label="frequent values">${esc(
        i.values
          .slice(0, 3)
          .map((v) => `${v.value} (${v.rows})`)
          .join(', '),
      )}</td></tr>`,
      )
      .join('')}
    </tbody></table>`;
  }
  /** @param {Run} r */
  function detail(r) {
    const rejected = r.files.includes('rejected.xlsx')
      ? `<a id="rejected-link" href="${fileUrl(r, 'rejected.xlsx')}">rejected rows (rejected.xlsx)</a>`
      : '';
    const rerun = r.rerun ? '<button type="button" id="rerun">Re-run</button>' : '';
    // Undo (docs/undo.md): a finished run that may have written; its plan is shown first.
    const undo =
      (r.status === 'done' || r.status === 'aborted') && r.reportDir
        ? '<button type="button" id="undo">Undo…</button>'
        : '';
    return `<h2>Run: ${esc(r.fileName)}</h2>
    <dl><dt>id</dt><dd><code>${esc(r.id)}</code></dd><dt>file</dt><dd>${esc(r.fileName)}</dd>${r.feed ? `<dt>feed</dt><dd>${esc(r.feed)}</dd>` : ''}
    <dt>mapping</dt><dd>${esc(r.mapping)} <a class="scorecard-link" href="/scorecard?mapping=${encodeURIComponent(r.mapping)}">scorecard</a></dd>${scopeText(r)}<dt>status</dt><dd class="status">${esc(r.status)}</dd>
    <dt>queued</dt><dd>${when(r.queuedAt)}</dd><dt>started</dt><dd>${when(r.startedAt)}</dd><dt>finished</dt><dd>${when(r.finishedAt)}</dd>
    <dt>outcome</dt><dd class="outcome">${outcome(r) || esc(progressText(r.progress))}</dd></dl>
    ${heldBox(r)}${withheldBox(r)}${issueTable(r)}<p>${rejected} ${rerun} ${undo}</p>`;
  }
  /** @param {number} x */
  const percent = (x) => `${Math.round(x * 1000) / 10} %`;
  /**
   * A run its quality gate held: the gate, what was measured, the rules that held it, and Apply anyway.
   * @param {Run} r
   */
  function heldBox(r) {
    const h = r.held;
    if (!h) return '';
    const max = h.gate.maxInvalidShare;
    const share = `${percent(h.invalidShare)} of the rows invalid (${h.invalidRows} of ${h.rows})${max === undefined ? '' : `, gate ${percent(max)}`}`;
    const rules = Object.entries(h.ruleRows)
      .map(([id, n]) => `<li><code>${esc(id)}</code>: ${n} row(s)</li>`)
      .join('');
    const gateRules = h.gate.rules?.length ? `; rules ${esc(h.gate.rules.join(', '))}` : '';
    const apply = r.apply
      ? '<button type="button" id="apply-anyway">Apply anyway</button> <span>queues the same run again with its gate waived: it writes</span>'
      : '';
    return `<section id="held" class="err"><h3>Held by its quality gate: nothing written</h3>
    <p class="held-gate">gate: ${max === undefined ? 'no invalid share' : `maxInvalidShare ${percent(max)}`}${gateRules}</p>
    <p class="held-share">measured: ${esc(share)}</p>${rules ? `<ul class="held-rules">${rules}</ul>` : ''}<p>${apply}</p></section>`;
  }
  /**
   * The scope the run kept to (docs/scopes.md): its words and the items it held.
   * @param {Run} r
   */
  function scopeText(r) {
    if (!r.scope) return '';
    const items = r.scope.items === null ? '' : ` (${r.scope.items} items, ${r.scope.active ?? '?'} active)`;
    return `<dt>scope</dt><dd class="scope">${esc(r.scope.text)}${esc(items)}</dd>`;
  }
  /**
   * What a full run withheld from archiving because rows had keys it could not read.
   * @param {Run} r
   */
  function withheldBox(r) {
    const w = r.withheld;
    if (!w) return '';
    const rows = w.rows
      .slice(0, 20)
      .map(
        (x) =>
          `<li>row ${x.row} ${x.value === null ? '(empty key)' : `<code>${esc(x.value)}</code>`}: ${esc(x.reason)}; ${x.items} item(s)${x.withheld.length ? ` — ${esc(x.withheld.map((i) => i.gtin ?? i.tradeItemId).join(', '))}` : ''}</li>`,
      )
      .join('');
    return `<section id="withheld" class="err"><h3>Archives withheld</h3><p>${esc(w.message)}</p><ul>${rows}</ul></section>`;
  }
  /** @param {string} id */
  async function showRun(id) {
    shown = id;
    const res = await fetch(`/runs/${encodeURIComponent(id)}`);
    if (!res.ok || shown !== id) return;
    /** @type {Run} */
    const r = await res.json();
    const html = detail(r);
    // Redrawn only when it changed: a redraw each second would pull the Re-run button from under a click.
    if ($('run-detail').dataset.html === html) return;
    $('run-detail').dataset.html = html;
    $('run-detail').innerHTML = html;
    $('run-detail').hidden = false;
    // Drawn only when the run allows them.
    const button = document.getElementById('rerun');
    if (button) button.addEventListener('click', () => queueAgain(r.id, 'rerun', 're-run'));
    const applyButton = document.getElementById('apply-anyway');
    if (applyButton)
      applyButton.addEventListener('click', () => queueAgain(r.id, 'apply', 'the held run, applied anyway,'));
    const undoButton = document.getElementById('undo');
    if (undoButton) undoButton.addEventListener('click', () => undoPlan(r.id, false));
  }
  // Undo: the dry-run plan (GET /runs/:id/undo-plan), then the undo itself on confirmation (POST /runs/:id/undo).
  /** @param {unknown} v */
  const shownValue = (v) => (v === null || v === undefined ? '(none)' : JSON.stringify(v));
  /**
   * @param {UndoCounts} c
   * @param {boolean} dry
   */
  function undoCounts(c, dry) {
    return `${c.items} items: ${dry ? 'to restore' : 'restored'} ${c.restored}, conflicts ${c.conflict}, already as before ${c.unchanged}, failed ${c.failed}`;
  }
  /** @param {UndoItem} i */
  function undoItem(i) {
    const head = `GTIN ${esc(i.gtin ?? '?')}: `;
    if (i.outcome === 'conflict')
      return `<li class="err">${head}conflict, left as it is<ul>${i.conflicts.map((c) => `<li>${esc(c.field)}: before ${esc(shownValue(c.before))}, run sent ${esc(shownValue(c.sent))}, now ${esc(shownValue(c.now))}</li>`).join('')}</ul></li>`;
    if (i.outcome === 'failed') return `<li class="err">${head}cannot undo: ${esc(i.message ?? '')}</li>`;
    return `<li>${head}${esc(i.action)}</li>`;
  }
  /**
   * @param {string} id
   * @param {boolean} force
   */
  async function undoPlan(id, force) {
    const box = $('undo-box');
    box.hidden = false;
    box.innerHTML = '<p>Reading the items this run changed…</p>';
    const res = await fetch(`/runs/${encodeURIComponent(id)}/undo-plan${force ? '?force=1' : ''}`);
    /** @type {{ error?: string, code?: string, counts: UndoCounts, items: UndoItem[], more: number }} */
    const out = await res.json();
    if (!res.ok) {
      box.innerHTML = `<p class="err">${esc(out.error)}</p>${out.code === 'PS_ERR_UNDO_BLOCKED' ? '<button type="button" id="undo-force">Show the plan anyway (force)</button>' : ''}`;
      // Drawn only for a blocked undo.
      const forceButton = document.getElementById('undo-force');
      if (forceButton) forceButton.addEventListener('click', () => undoPlan(id, true));
      return;
    }
    const more = out.more > 0 ? `<p>… and ${out.more} more (the report lists them all).</p>` : '';
    box.innerHTML = `<h2>Undo plan (nothing sent yet)</h2><p>${esc(undoCounts(out.counts, true))}</p>
    <ul>${out.items.map(undoItem).join('')}</ul>${more}
    <p>Items created by the run are archived (the API cannot delete). Conflicting items are left as they are.</p>
    <button type="button" id="undo-run" ${out.counts.restored === 0 ? 'disabled' : ''}>Undo now</button><button type="button" id="undo-cancel">Cancel</button>`;
    $('undo-cancel').addEventListener('click', () => {
      box.hidden = true;
      box.innerHTML = '';
    });
    $('undo-run').addEventListener('click', () => undoRun(id, force));
  }
  /**
   * @param {string} id
   * @param {boolean} force
   */
  async function undoRun(id, force) {
    const box = $('undo-box');
    const res = await fetch(`/runs/${encodeURIComponent(id)}/undo${force ? '?force=1' : ''}`, { method: 'POST' });
    if (!res.ok) {
      box.innerHTML = `<p class="err">refused: ${esc((await res.json()).error)}</p>`;
      return;
    }
    box.innerHTML = '<p>Undoing…</p>';
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      /**
       * @type {{ status: string, runId?: string, exitCode?: number, error?: string,
       *   summary: { counts: UndoCounts, aborted?: string } }}
       */
      const s = await (await fetch(`/runs/${encodeURIComponent(id)}/undo`)).json();
      if (s.status === 'running') continue;
      const files = ['rows.csv', 'conflicts.csv', 'summary.json']
        .map((f) => `<a href="/runs/${encodeURIComponent(id)}/undo/files/${f}">${f}</a>`)
        .join(' ');
      box.innerHTML =
        s.status === 'done'
          ? `<h2>Undo ${esc(s.runId)}</h2><p class="${s.exitCode === 0 ? 'ok' : 'err'}">${esc(undoCounts(s.summary.counts, false))}${s.summary.aborted ? ` — aborted: ${esc(s.summary.aborted)}` : ''}</p><p>${files}</p>`
          : `<p class="err">${s.status === 'unfinished' ? '' : 'undo failed: '}${esc(s.error)}</p>`;
      return;
    }
  }
  /**
   * Re-run, or apply a held run anyway: the run queued again (POST /runs/:id/rerun or /apply), then shown.
   * @param {string} id
   * @param {'rerun' | 'apply'} route
   * @param {string} what
   */
  async function queueAgain(id, route, what) {
    const res = await fetch(`/runs/${encodeURIComponent(id)}/${route}`, { method: 'POST' });
    /** @type {{ id: string, error?: string }} */
    const out = await res.json();
    $('message').textContent = res.ok ? `${what} queued as ${out.id}` : `refused: ${out.error}`;
    $('message').className = res.ok ? 'ok' : 'err';
    if (res.ok) location.hash = `run=${encodeURIComponent(out.id)}`;
    refresh();
  }
  async function refresh() {
    const params = new URLSearchParams({ limit: String(PAGE * pages) });
    for (const k of ['feed', 'mapping', 'file']) {
      const v = /** @type {HTMLInputElement} */ ($(`filter-${k}`)).value.trim();
      if (v) params.set(k, v);
    }
    const res = await fetch(`/runs?${params}`);
    // 503 while Redis is away: the banner says so; the last list stays.
    if (!res.ok) return;
    /** @type {{ runs: Run[], next: string | null }} */
    const { runs, next } = await res.json();
    const html = runs.map(row).join('');
    if ($('runs').dataset.html !== html) {
      $('runs').dataset.html = html;
      $('runs').innerHTML = html;
    }
    $('older').hidden = next === null;
    if (shown) showRun(shown);
  }
  function followHash() {
    const m = /^#run=(.+)$/.exec(location.hash);
    $('undo-box').hidden = true;
    if (m) showRun(decodeURIComponent(/** @type {string} */ (m[1])));
  }
  window.addEventListener('hashchange', followHash);
  $('older').addEventListener('click', () => {
    pages++;
    refresh();
  });
  // The runs list filtered by feed, mapping and file name (GET /runs?feed=&mapping=&file=) as one types.
  $('run-filter').addEventListener('input', () => {
    pages = 1;
    refresh();
  });
  $('run-filter').addEventListener('submit', (e) => e.preventDefault());
  $('upload').addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = new FormData();
    body.append('mapping', /** @type {HTMLSelectElement} */ ($('mapping')).value);
    body.append('mode', /** @type {HTMLSelectElement} */ ($('mode')).value);
    body.append('dryRun', $input('dryRun').checked ? 'true' : 'false');
    // The file input is `required`: the form is not sent without one.
    body.append('file', /** @type {File} */ (/** @type {FileList} */ ($input('file').files)[0]));
    const res = await fetch('/uploads', { method: 'POST', body });
    /**
     * Queued (202), already there (200: `existed` with a message), or refused (`error`).
     * @type {{ id: string, existed: true, message: string, error?: undefined }
     *   | { id: string, existed?: false, message?: undefined, error?: string }}
     */
    const out = await res.json();
    $('message').textContent = res.ok ? (out.existed ? out.message : `queued as ${out.id}`) : `refused: ${out.error}`;
    $('message').className = res.ok ? 'ok' : 'err';
    if (res.ok) location.hash = `run=${encodeURIComponent(out.id)}`;
    refresh();
  });
  loadMappings();
  followHash();
  refresh();
  setInterval(refresh, 1000);
  // The banner follows /health (the server shows it when it sends the page during an outage).
  async function redisHealth() {
    /** @type {{ redis: string }} */
    const h = await fetch('/health').then(
      (r) => r.json(),
      () => ({ redis: 'down' }),
    );
    $('redis-banner').hidden = h.redis !== 'down';
  }
  setInterval(redisHealth, 3000);
  // Dead events (webhook deliveries out of retries), with a redeliver button each; the section shows when there are
  // some.
  async function refreshDeadEvents() {
    const res = await fetch('/events/dead');
    if (!res.ok) return;
    /** @type {{ events: DeadEvent[] }} */
    const { events } = await res.json();
    const html = events
      .map(
        (e) => `<tr><td data-label="event"><code>${esc(e.id)}</code></td><td data-label="type">${esc(e.type)}</td>
<td data-label="endpoint">${esc(e.url ?? e.endpoint)}</td><td data-label="attempts" class="num">${esc(e.attempts)}</td>
<td data-label="failed">${when(e.failedAt)}</td><td data-label="last error">${esc(e.failedReason)}</td>
<td><button type="button" data-redeliver="${esc(e.jobId)}">redeliver</button></td></tr>`,
      )
      .join('');
    if ($('dead-events').dataset.html !== html) {
      $('dead-events').dataset.html = html;
      $('dead-events').innerHTML = html;
    }
    $('dead-events-section').hidden = events.length === 0;
  }
  $('dead-events').addEventListener('click', async (e) => {
    const jobId = /** @type {HTMLElement | null} */ (e.target)?.dataset?.redeliver;
    if (!jobId) return;
    const res = await fetch(`/events/dead/${encodeURIComponent(jobId)}/redeliver`, { method: 'POST' });
    /** @type {{ error?: string }} */
    const out = await res.json();
    $('message').textContent = res.ok ? 'event queued again' : `refused: ${out.error}`;
    $('message').className = res.ok ? 'ok' : 'err';
    refreshDeadEvents();
  });
  refreshDeadEvents();
  setInterval(refreshDeadEvents, 5000);
})();
