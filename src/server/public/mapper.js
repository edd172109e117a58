// @ts-check
// The console's mapper: upload a sheet, change the suggested fields, watch the preview, save the mapping, run it.
// Plain browser JavaScript, no build step (docs/queue.md, "The mapper page"); type-checked from the JSDoc types below
// by `npm run typecheck` (tsconfig.browser.json) and linted by eslint.

/**
 * A column of the draft mapping, as the server sends it (`ColumnSuggestion` in src/onboarding/suggest.ts).
 * @typedef {{
 *   header: string,
 *   position: number,
 *   samples: string[],
 *   field?: string,
 *   type?: string,
 *   lookup?: unknown,
 *   split?: string,
 *   format?: string,
 *   decimal?: string,
 *   values?: Record<string, string>,
 *   unresolved?: { value: string, nearest: string[] }[],
 *   reason?: string,
 *   warning?: string,
 * }} Column
 */
/**
 * The draft mapping (`MappingDraft` in src/onboarding/suggest.ts); the page sends it back as it edits it.
 * @typedef {{
 *   name: string,
 *   target: string,
 *   language: string,
 *   languageReason?: string,
 *   sheet?: string,
 *   headerRow: number,
 *   columns: Column[],
 *   notes: string[],
 *   missingKey?: string,
 * }} Draft
 */
/**
 * A preview (`Preview` in src/pipeline/run/preview.ts; docs/reports.md, "Preview"), the fields this page shows.
 * @typedef {{ value: string, id: string | null, label: string | null, code?: string, problem?: string }} Resolved
 * @typedef {{ code: string, severity: string, message: string, column: string | null }} PreviewIssue
 * @typedef {{
 *   field: string,
 *   column: string | null,
 *   sheetValue: string | null,
 *   mapped: unknown,
 *   resolved?: Resolved[],
 * }} PreviewField
 * @typedef {{
 *   row: number,
 *   key: string | null,
 *   outcome: string,
 *   fields: PreviewField[],
 *   issues: PreviewIssue[],
 * }} PreviewRow
 * @typedef {{
 *   counts: { rows: number, valid: number, invalid: number },
 *   more: boolean,
 *   notes: string[],
 *   rows: PreviewRow[],
 * }} Preview
 */
/**
 * A refusal of the server: its message and, for a mapping, every problem (`line` when the YAML has one).
 * @typedef {{ error?: string, problems?: { line?: number | null, path?: string, message: string }[] }} Refusal
 */
/**
 * A run as `GET /runs/:id` shows it (`ApiRun` in src/server/runs.ts), the fields this page shows.
 * @typedef {{
 *   status: string,
 *   reason: string | null,
 *   exitCode: number | null,
 *   counts: { created: number, updated: number, unchanged: number, invalid: number, failed: number } | null,
 * }} RunStatus
 */

/**
 * The element of the page with this id (the page has every id this script names).
 * @param {string} id
 */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const $input = (id) => /** @type {HTMLInputElement} */ ($(id));
/** @param {string} id */
const $select = (id) => /** @type {HTMLSelectElement} */ ($(id));
/** @param {string} id */
const $button = (id) => /** @type {HTMLButtonElement} */ ($(id));
/** The sheet chosen in the upload form (its input is `required`: the form is not sent without one). */
const chosenFile = () => /** @type {File} */ (/** @type {FileList} */ ($input('mapper-file').files)[0]);
/**
 * The element under `root` that `selector` names (the page's own markup always has it).
 * @param {ParentNode} root
 * @param {string} selector
 */
const one = (root, selector) => /** @type {HTMLElement} */ (root.querySelector(selector));
/** @param {unknown} s */
const esc = (s) =>
  String(s ?? '').replace(
    /[&<>"]/g,
    (c) => /** @type {Record<string, string>} */ ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c,
  );
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The uploaded sheet, the draft being edited, the draft as suggested, the field choices, the saved mapping's name.
 * @type {{
 *   sheet: string | null,
 *   fileName: string,
 *   draft: Draft | null,
 *   suggested: Draft | null,
 *   choices: string[],
 *   settings: Record<string, Partial<Column>>,
 *   types: string[],
 *   fieldTypes: Record<string, string>,
 *   listFields: string[],
 *   saved: string | null,
 *   previewSeq: number,
 * }}
 */
const state = {
  sheet: null,
  fileName: '',
  draft: null,
  suggested: null,
  choices: [],
  settings: {},
  types: [],
  fieldTypes: {},
  listFields: [],
  saved: null,
  previewSeq: 0,
};

/** The draft being edited (every control that edits it is in the section shown once a sheet was suggested). */
function draft() {
  if (!state.draft) throw new Error('no sheet suggested yet');
  return state.draft;
}

/** The row of draft column `i` in the columns table. @param {number} i */
const columnRow = (i) => /** @type {HTMLTableRowElement} */ ($('columns').querySelectorAll('tr')[i]);

/**
 * @param {string} id
 * @param {string} text
 * @param {string} [cls]
 */
function say(id, text, cls) {
  $(id).textContent = text;
  $(id).className = cls || '';
}

/** @param {Refusal} out */
function problemsText(out) {
  const list = (out.problems || []).map(
    (p) => `${p.line ? `line ${p.line}: ` : ''}${p.path ? `${p.path}: ` : ''}${p.message}`,
  );
  return [out.error, ...list].filter(Boolean).join(' — ');
}

/**
 * @param {string} url
 * @param {unknown} body
 * @returns {Promise<{ res: Response, out: any }>} the answer's JSON as it comes (each caller says what it expects)
 */
async function postJson(url, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, out: await res.json().catch(() => ({ error: `HTTP ${res.status}` })) };
}

/** @param {Column} c */
function reasonHtml(c) {
  return `${esc(c.reason)}${c.warning ? `<br><span class="warn">check: ${esc(c.warning)}</span>` : ''}`;
}

/** The type a column is read as: its own, else its field's default (the mapping's defaultType). */
const typeOf = (/** @type {Column} */ c) => c.type || (c.field && state.fieldTypes[c.field]) || '';
const NUMERIC = ['decimal', 'integer', 'number', 'quantity'];

/**
 * A mapped column's settings, the mapping's column keys: type (empty = the field's default; `quantity` on a net content
 * reads "400g" into its value and unit), date format, decimal separator, list separator of a list field, and the value
 * map (sheet value → value the field takes), with the values its list will not resolve.
 * @param {Column} c
 * @param {number} i
 */
function settingsHtml(c, i) {
  if (!c.field) return '';
  const type = typeOf(c);
  const types = [
    `<option value="">${esc(state.fieldTypes[c.field] || 'default')} (the field's)</option>`,
    ...state.types.map((t) => `<option${t === c.type ? ' selected' : ''}>${esc(t)}</option>`),
  ].join('');
  const parts = [
    `<label>type <select class="type" data-index="${i}" aria-label="type of ${esc(c.header)}">${types}</select></label>`,
  ];
  if (type === 'date')
    parts.push(
      `<label>date format <input class="format" data-index="${i}" value="${esc(c.format)}" placeholder="dd/mm/yyyy" aria-label="date format of ${esc(c.header)}"></label>`,
    );
  if (NUMERIC.includes(type))
    parts.push(
      `<label>decimal <select class="decimal" data-index="${i}" aria-label="decimal separator of ${esc(c.header)}">${[
        ['', "the sheet's"],
        [',', ','],
        ['.', '.'],
      ]
        .map(([v, t]) => `<option value="${v}"${(c.decimal || '') === v ? ' selected' : ''}>${esc(t)}</option>`)
        .join('')}</select></label>`,
    );
  if (state.listFields.includes(c.field))
    parts.push(
      `<label>list separator <input class="split" data-index="${i}" value="${esc(c.split)}" placeholder="none" size="3" maxlength="10" aria-label="list separator of ${esc(c.header)}"></label>`,
    );
  const pairs = Object.entries(c.values || {});
  const pairHtml = (/** @type {string} */ k, /** @type {string} */ v) =>
    `<div class="pair"><input class="vkey" data-index="${i}" value="${esc(k)}" placeholder="sheet value" aria-label="sheet value"> → <input class="vval" data-index="${i}" value="${esc(v)}" placeholder="becomes" aria-label="becomes"></div>`;
  const unresolved = (c.unresolved || [])
    .map(
      (u) =>
        `<li>${esc(u.value)}: ${u.nearest.length ? `nearest ${u.nearest.map(esc).join(', ')} <button type="button" class="use-nearest" data-index="${i}" data-value="${esc(u.value)}" data-label="${esc(u.nearest[0])}">map to ${esc(u.nearest[0])}</button>` : 'no label close'}</li>`,
    )
    .join('');
  parts.push(
    `<details class="values"${pairs.length || unresolved ? ' open' : ''}><summary>value map (${pairs.length})</summary>
    ${unresolved ? `<div class="warn">values no label of the list matches:</div><ul class="unresolved">${unresolved}</ul>` : ''}
    <div class="pairs">${pairs.map(([k, v]) => pairHtml(k, v)).join('')}</div>
    <button type="button" class="add-pair" data-index="${i}">add a value</button></details>`,
  );
  return parts.join('');
}

/** @param {number} i */
function renderSettings(i) {
  const c = column(i);
  const row = columnRow(i);
  one(row, '.settings').innerHTML = settingsHtml(c, i);
  one(row, '.reason').innerHTML = reasonHtml(c);
}

/** Draft column `i`. @param {number} i */
const column = (i) => /** @type {Column} */ (draft().columns[i]);

/**
 * @param {Column} c
 * @param {number} i
 */
function rowHtml(c, i) {
  const choices = c.field && !state.choices.includes(c.field) ? [c.field, ...state.choices] : state.choices;
  const options = [
    '<option value="">— not mapped —</option>',
    ...choices.map((f) => `<option${f === c.field ? ' selected' : ''}>${esc(f)}</option>`),
  ].join('');
  return `<tr data-header="${esc(c.header)}">
    <td>${c.position}</td><td><strong>${esc(c.header)}</strong></td><td class="samples">${c.samples.map(esc).join(' · ')}</td>
    <td><select class="field" data-index="${i}" aria-label="field of ${esc(c.header)}">${options}</select></td>
    <td class="settings">${settingsHtml(c, i)}</td>
    <td class="reason">${reasonHtml(c)}</td></tr>`;
}

function renderColumns() {
  $('columns').innerHTML = draft().columns.map(rowHtml).join('');
}

/** A value as JSON with its keys sorted: two columns compare equal whatever order their keys came in. */
const canonical = (/** @type {unknown} */ v) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

/**
 * The draft as the server writes it (a quantity column feeds its net content, a list column its separator): the
 * columns it changed are taken, and their rows drawn again.
 * @param {Draft | undefined} adopted
 */
function adopt(adopted) {
  if (!adopted || adopted.columns.length !== draft().columns.length) return;
  adopted.columns.forEach((c, i) => {
    if (canonical(c) === canonical(draft().columns[i])) return;
    draft().columns[i] = c;
    columnRow(i).outerHTML = rowHtml(c, i);
  });
}

/** @type {readonly (keyof Column)[]} */
const SUGGESTED = [
  'field',
  'type',
  'lookup',
  'split',
  'format',
  'decimal',
  'values',
  'unresolved',
  'reason',
  'warning',
];

/**
 * A column's field changed: what the suggestion read in the column (type, lookup, split, format…) goes with its field
 * only; a field picked here gets the type and lookup the field usually takes (tradeItemStatusId: a list lookup).
 * @param {number} i
 * @param {string} field
 */
function setField(i, field) {
  const c = column(i);
  const s = /** @type {Column} */ (/** @type {Draft} */ (state.suggested).columns[i]);
  for (const k of SUGGESTED) delete c[k];
  if (field && field === s.field) {
    for (const k of SUGGESTED)
      if (s[k] !== undefined) /** @type {Record<string, unknown>} */ (c)[k] = JSON.parse(JSON.stringify(s[k]));
  } else if (field) {
    Object.assign(c, JSON.parse(JSON.stringify(state.settings[field] || {})), { field, reason: 'chosen here' });
  }
  renderSettings(i);
  changed();
}

/** The draft changed: the saved mapping is no longer what the page shows, and the preview follows. */
function changed() {
  state.saved = null;
  $button('run').disabled = true;
  refreshPreview();
}

/**
 * A column's type changed: a date format or decimal separator goes with the type that takes it.
 * @param {number} i
 * @param {string} type
 */
function setType(i, type) {
  const c = column(i);
  if (type) c.type = type;
  else delete c.type;
  const t = typeOf(c);
  if (t !== 'date') delete c.format;
  if (!NUMERIC.includes(t)) delete c.decimal;
  renderSettings(i);
  changed();
}

/**
 * The value map of column i as its pair inputs say (a pair without a sheet value is left out).
 * @param {number} i
 */
function readValues(i) {
  const c = column(i);
  const cell = one(columnRow(i), '.pairs');
  /** @type {Record<string, string>} */
  const values = {};
  for (const p of cell.querySelectorAll('.pair')) {
    const k = /** @type {HTMLInputElement} */ (one(p, '.vkey')).value;
    if (k.trim() !== '') values[k] = /** @type {HTMLInputElement} */ (one(p, '.vval')).value;
  }
  if (Object.keys(values).length > 0) c.values = values;
  else delete c.values;
  one(columnRow(i), '.values summary').textContent = `value map (${Object.keys(values).length})`;
  changed();
}

/**
 * @param {number} i
 * @param {string} [key]
 * @param {string} [value]
 */
function addPair(i, key, value) {
  const cell = one(columnRow(i), '.pairs');
  cell.insertAdjacentHTML(
    'beforeend',
    `<div class="pair"><input class="vkey" data-index="${i}" placeholder="sheet value" aria-label="sheet value"> → <input class="vval" data-index="${i}" placeholder="becomes" aria-label="becomes"></div>`,
  );
  const pair = /** @type {Element} */ (cell.lastElementChild);
  const vkey = /** @type {HTMLInputElement} */ (one(pair, '.vkey'));
  vkey.value = key || '';
  /** @type {HTMLInputElement} */ (one(pair, '.vval')).value = value || '';
  if (key) readValues(i);
  else vkey.focus();
}

/** @param {Resolved} r */
function resolvedText(r) {
  if (r.problem === 'BRAND_WOULD_CREATE') return 'new brand';
  if (r.id === null) return `✗ ${r.problem || 'unresolved'}`;
  const id = UUID.test(r.id) ? r.id.slice(0, 8) : r.id;
  if (r.label === null) return r.code === r.id || r.code === undefined ? `${id} ✓` : `${r.code} [${id}]`;
  return `${r.label} [${id}]`;
}

/** @type {(v: unknown) => string} */
const show = (v) =>
  v === null || v === undefined
    ? ''
    : Array.isArray(v)
      ? v.map(show).join(', ')
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/** @param {Preview} p */
function renderPreview(p) {
  say(
    'preview-status',
    `${p.counts.rows} rows: ${p.counts.valid} valid, ${p.counts.invalid} invalid${p.more ? ' (the sheet has more rows)' : ''}. ${p.notes.map((n) => n.charAt(0).toUpperCase() + n.slice(1)).join('. ')}.`,
    p.counts.invalid ? 'err' : 'ok',
  );
  $('preview').innerHTML = p.rows
    .map((r) => {
      const errors = r.issues.filter((x) => x.severity === 'error').length;
      const fields = r.fields
        .map(
          (
            f,
          ) => `<tr data-field="${esc(f.field)}"><td><code>${esc(f.field)}</code></td><td>${esc(f.column ?? '(default)')}</td>
      <td class="sheet">${esc(f.sheetValue)}</td><td class="mapped">${esc(show(f.mapped))}</td>
      <td class="resolved" title="${esc(
        (f.resolved || [])
          .map((x) => x.id)
          .filter(Boolean)
          .join(', '),
      )}">${esc((f.resolved || []).map(resolvedText).join(', '))}</td></tr>`,
        )
        .join('');
      const issues = r.issues
        .map(
          (x) =>
            `<li class="${x.severity === 'error' ? 'err' : 'warn'}">${esc(x.severity)} <code>${esc(x.code)}</code>${x.column ? ` [${esc(x.column)}]` : ''}: ${esc(x.message)}</li>`,
        )
        .join('');
      return `<section class="row" data-row="${r.row}"><h3 class="${r.outcome === 'valid' ? 'ok' : 'err'}">row ${r.row} · key ${esc(r.key ?? '—')} · ${r.outcome}${errors ? ` (${errors} error${errors > 1 ? 's' : ''})` : ''}</h3>
      <table><thead><tr><th>field</th><th>column</th><th>sheet value</th><th>mapped</th><th>resolved</th></tr></thead><tbody>${fields}</tbody></table>
      ${issues ? `<ul class="issues">${issues}</ul>` : ''}</section>`;
    })
    .join('');
}

async function refreshPreview() {
  const seq = ++state.previewSeq;
  $('preview').setAttribute('aria-busy', 'true');
  const { res, out } = await postJson('/mapper/preview', {
    sheet: state.sheet,
    draft: state.draft,
    rows: Number($select('preview-rows').value),
  });
  // An older answer arriving after a newer request is dropped.
  if (seq !== state.previewSeq) return;
  $('preview').removeAttribute('aria-busy');
  if (out.text !== undefined) $('mapping-text').textContent = out.text;
  adopt(out.draft);
  if (!res.ok) {
    say('preview-status', problemsText(out), 'err');
    $('preview').innerHTML = '';
    return;
  }
  renderPreview(out.preview);
}

/**
 * Uploads the sheet and shows the suggested mapping; `choice` = the worksheet and header row picked on the page.
 * @param {{ sheet: string, headerRow?: number } | null} choice
 */
async function suggest(choice) {
  const body = new FormData();
  body.append('target', $select('target').value);
  if ($input('language').value) body.append('language', $input('language').value);
  if (choice && choice.sheet) body.append('sheet', choice.sheet);
  if (choice && choice.headerRow) body.append('headerRow', String(choice.headerRow));
  body.append('file', chosenFile());
  say('suggest-message', 'reading the sheet…');
  const res = await fetch('/mapper/sheets', { method: 'POST', body });
  /**
   * @type {{ error?: string, sheet: string, fileName: string, sheets?: string[], draft: Draft, choices: string[],
   *   settings?: Record<string, Partial<Column>>, types?: string[], fieldTypes?: Record<string, string>,
   *   listFields?: string[] }}
   */
  const out = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) {
    say('suggest-message', `refused: ${out.error}`, 'err');
    return;
  }
  Object.assign(state, {
    sheet: out.sheet,
    fileName: out.fileName,
    draft: out.draft,
    suggested: JSON.parse(JSON.stringify(out.draft)),
    choices: out.choices,
    settings: out.settings || {},
    types: out.types || [],
    fieldTypes: out.fieldTypes || {},
    listFields: out.listFields || [],
    saved: null,
  });
  const matched = out.draft.columns.filter((c) => c.field).length;
  say(
    'suggest-message',
    `${out.draft.columns.length} columns, ${matched} matched to a field; language ${out.draft.language}${out.draft.languageReason ? ` (${out.draft.languageReason})` : ''}`,
    'ok',
  );
  // The missing key is its own banner: the mapping cannot run until a column feeds it.
  $('missing-key').hidden = !out.draft.missingKey;
  $('missing-key').textContent = out.draft.missingKey ? `No GTIN key column found: ${out.draft.missingKey}` : '';
  $('notes').innerHTML = (out.draft.notes || [])
    .filter((n) => n !== out.draft.missingKey)
    .map((n) => `<li>${esc(n)}</li>`)
    .join('');
  $('sheet-name').textContent = out.fileName;
  const sheets = out.sheets || [];
  $('sheet-choice-label').hidden = sheets.length === 0;
  const current = out.draft.sheet || sheets[0];
  $('sheet-choice').innerHTML = sheets
    .map((n) => `<option${n === current ? ' selected' : ''}>${esc(n)}</option>`)
    .join('');
  $input('header-row').value = String(out.draft.headerRow || 1);
  if (!$input('mapping-name').value) $input('mapping-name').value = out.draft.name || '';
  $('mapper').hidden = false;
  $button('run').disabled = true;
  renderColumns();
  refreshPreview();
}

$('suggest-form').addEventListener('submit', (e) => {
  e.preventDefault();
  suggest(null);
});

/**
 * Another worksheet: suggested anew, its header row found as `mapping init` finds it (none sent). Another header row:
 * suggested anew with it, on the worksheet chosen.
 */
const chosenSheet = () => ($('sheet-choice-label').hidden ? '' : $select('sheet-choice').value);
$('sheet-choice').addEventListener('change', () => suggest({ sheet: chosenSheet() }));
$('header-row').addEventListener('change', () => {
  const headerRow = Number($input('header-row').value);
  if (!(Number.isInteger(headerRow) && headerRow >= 1 && headerRow <= 1000)) return;
  suggest({ sheet: chosenSheet(), headerRow });
});
$('sheet-form').addEventListener('submit', (e) => e.preventDefault());

$('columns').addEventListener('change', (e) => {
  // The table's inputs and selects (their `value`).
  const t = /** @type {HTMLInputElement} */ (e.target);
  const i = Number(t.dataset.index);
  if (t.matches('select.field')) setField(i, t.value);
  else if (t.matches('select.type')) setType(i, t.value);
  else if (t.matches('input.format')) {
    if (t.value.trim()) column(i).format = t.value.trim();
    else delete column(i).format;
    changed();
  } else if (t.matches('select.decimal')) {
    if (t.value) column(i).decimal = t.value;
    else delete column(i).decimal;
    changed();
  } else if (t.matches('input.split')) {
    // Emptied: no separator (the cell is one value), not the one the samples show.
    column(i).split = t.value.trim() === '' ? '' : t.value;
    changed();
  } else if (t.matches('input.vkey, input.vval')) readValues(i);
});
$('columns').addEventListener('click', (e) => {
  const t = /** @type {HTMLElement} */ (e.target);
  if (t.matches('button.add-pair')) addPair(Number(t.dataset.index));
  else if (t.matches('button.use-nearest')) addPair(Number(t.dataset.index), t.dataset.value, t.dataset.label);
});
$('preview-rows').addEventListener('change', refreshPreview);

$('save-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = $input('mapping-name').value.trim();
  const { res, out } = await postJson('/mapper/mappings', {
    name,
    draft: { ...state.draft, name },
    overwrite: $input('overwrite').checked,
  });
  if (!res.ok) {
    say('save-message', `not saved: ${problemsText(out)}`, 'err');
    return;
  }
  adopt(out.draft);
  state.saved = out.name;
  say('save-message', `saved as ${out.name} (${out.replaced ? 'replaced' : 'new'}: mappings/${out.file})`, 'ok');
  $button('run').disabled = false;
});

/** @param {RunStatus} s */
function outcomeText(s) {
  if (!s.counts) return s.reason ? `${s.status}: ${s.reason}` : `${s.status}…`;
  const c = s.counts;
  return `created ${c.created} · updated ${c.updated} · unchanged ${c.unchanged} · invalid ${c.invalid} · failed ${c.failed} (exit ${s.exitCode})`;
}

$('run-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  if (!state.saved) return;
  const body = new FormData();
  body.append('mapping', state.saved);
  body.append('mode', $select('mode').value);
  body.append('dryRun', $input('dry-run').checked ? 'true' : 'false');
  body.append('file', chosenFile());
  const res = await fetch('/uploads', { method: 'POST', body });
  /** @type {{ id: string, error?: string }} */
  const out = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) {
    say('run-outcome', `refused: ${out.error}`, 'err');
    return;
  }
  say('run-outcome', `queued as ${out.id}…`);
  for (;;) {
    /** @type {RunStatus} */
    const s = await (await fetch(`/runs/${encodeURIComponent(out.id)}`)).json();
    if (s.status !== 'queued' && s.status !== 'running') {
      const links = s.counts
        ? ['rows.csv', 'rows.xlsx', 'summary.json']
            .map((f) => `<a href="/runs/${encodeURIComponent(out.id)}/files/${f}">${f}</a>`)
            .join(' ')
        : '';
      $('run-outcome').innerHTML =
        `<span class="${s.exitCode === 0 ? 'ok' : 'err'} outcome">${esc(outcomeText(s))}</span> ${links}`;
      return;
    }
    say('run-outcome', `${out.id}: ${outcomeText(s)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

// The banner follows /health (the server shows it when it sends the page during an outage).
setInterval(async () => {
  /** @type {{ redis: string }} */
  const h = await fetch('/health').then(
    (r) => r.json(),
    () => ({ redis: 'down' }),
  );
  $('redis-banner').hidden = h.redis !== 'down';
}, 3000);
