// The console's mapper: upload a sheet, change the suggested fields, watch the preview, save the mapping, run it.
// Plain browser JavaScript, no build step (docs: README "Console").
const $ = (id) => document.getElementById(id);
const esc = (s) =>
  String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The uploaded sheet, the draft being edited, the draft as suggested, the field choices, the saved mapping's name. */
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

function say(id, text, cls) {
  $(id).textContent = text;
  $(id).className = cls || '';
}

function problemsText(out) {
  const list = (out.problems || []).map(
    (p) => `${p.line ? `line ${p.line}: ` : ''}${p.path ? `${p.path}: ` : ''}${p.message}`,
  );
  return [out.error, ...list].filter(Boolean).join(' — ');
}

async function postJson(url, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, out: await res.json().catch(() => ({ error: `HTTP ${res.status}` })) };
}

function reasonHtml(c) {
  return `${esc(c.reason)}${c.warning ? `<br><span class="warn">check: ${esc(c.warning)}</span>` : ''}`;
}

/** The type a column is read as: its own, else its field's default (the mapping's defaultType). */
const typeOf = (c) => c.type || state.fieldTypes[c.field] || '';
const NUMERIC = ['decimal', 'integer', 'number', 'quantity'];

/**
 * A mapped column's settings, the mapping's column keys: type (empty = the field's default; `quantity` on a net content
 * reads "400g" into its value and unit), date format, decimal separator, list separator of a list field, and the value
 * map (sheet value → value the field takes), with the values its list will not resolve.
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
  const pairHtml = (k, v) =>
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

function renderSettings(i) {
  const c = state.draft.columns[i];
  const row = $('columns').querySelectorAll('tr')[i];
  row.querySelector('.settings').innerHTML = settingsHtml(c, i);
  row.querySelector('.reason').innerHTML = reasonHtml(c);
}

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
  $('columns').innerHTML = state.draft.columns.map(rowHtml).join('');
}

/** A value as JSON with its keys sorted: two columns compare equal whatever order their keys came in. */
const canonical = (v) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

/**
 * The draft as the server writes it (a quantity column feeds its net content, a list column its separator): the
 * columns it changed are taken, and their rows drawn again.
 */
function adopt(draft) {
  if (!draft || draft.columns.length !== state.draft.columns.length) return;
  draft.columns.forEach((c, i) => {
    if (canonical(c) === canonical(state.draft.columns[i])) return;
    state.draft.columns[i] = c;
    $('columns').querySelectorAll('tr')[i].outerHTML = rowHtml(c, i);
  });
}

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
 */
function setField(i, field) {
  const c = state.draft.columns[i];
  const s = state.suggested.columns[i];
  for (const k of SUGGESTED) delete c[k];
  if (field && field === s.field) {
    for (const k of SUGGESTED) if (s[k] !== undefined) c[k] = JSON.parse(JSON.stringify(s[k]));
  } else if (field) {
    Object.assign(c, JSON.parse(JSON.stringify(state.settings[field] || {})), { field, reason: 'chosen here' });
  }
  renderSettings(i);
  changed();
}

/** The draft changed: the saved mapping is no longer what the page shows, and the preview follows. */
function changed() {
  state.saved = null;
  $('run').disabled = true;
  refreshPreview();
}

/** A column's type changed: a date format or decimal separator goes with the type that takes it. */
function setType(i, type) {
  const c = state.draft.columns[i];
  if (type) c.type = type;
  else delete c.type;
  const t = typeOf(c);
  if (t !== 'date') delete c.format;
  if (!NUMERIC.includes(t)) delete c.decimal;
  renderSettings(i);
  changed();
}

/** The value map of column i as its pair inputs say (a pair without a sheet value is left out). */
function readValues(i) {
  const c = state.draft.columns[i];
  const cell = $('columns').querySelectorAll('tr')[i].querySelector('.pairs');
  const values = {};
  for (const p of cell.querySelectorAll('.pair')) {
    const k = p.querySelector('.vkey').value;
    if (k.trim() !== '') values[k] = p.querySelector('.vval').value;
  }
  if (Object.keys(values).length > 0) c.values = values;
  else delete c.values;
  $('columns').querySelectorAll('tr')[i].querySelector('.values summary').textContent =
    `value map (${Object.keys(values).length})`;
  changed();
}

function addPair(i, key, value) {
  const cell = $('columns').querySelectorAll('tr')[i].querySelector('.pairs');
  cell.insertAdjacentHTML(
    'beforeend',
    `<div class="pair"><input class="vkey" data-index="${i}" placeholder="sheet value" aria-label="sheet value"> → <input class="vval" data-index="${i}" placeholder="becomes" aria-label="becomes"></div>`,
  );
  const pair = cell.lastElementChild;
  pair.querySelector('.vkey').value = key || '';
  pair.querySelector('.vval').value = value || '';
  if (key) readValues(i);
  else pair.querySelector('.vkey').focus();
}

function resolvedText(r) {
  if (r.problem === 'BRAND_WOULD_CREATE') return 'new brand';
  if (r.id === null) return `✗ ${r.problem || 'unresolved'}`;
  const id = UUID.test(r.id) ? r.id.slice(0, 8) : r.id;
  if (r.label === null) return r.code === r.id || r.code === undefined ? `${id} ✓` : `${r.code} [${id}]`;
  return `${r.label} [${id}]`;
}

const show = (v) =>
  v === null || v === undefined
    ? ''
    : Array.isArray(v)
      ? v.map(show).join(', ')
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

function renderPreview(p) {
  say(
    'preview-status',
    `${p.counts.rows} rows: ${p.counts.valid} valid, ${p.counts.invalid} invalid${p.more ? ' (the sheet has more rows)' : ''}. ${p.notes.map((n) => n[0].toUpperCase() + n.slice(1)).join('. ')}.`,
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
    rows: Number($('preview-rows').value),
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

/** Uploads the sheet and shows the suggested mapping; `choice` = the worksheet and header row picked on the page. */
async function suggest(choice) {
  const body = new FormData();
  body.append('target', $('target').value);
  if ($('language').value) body.append('language', $('language').value);
  if (choice && choice.sheet) body.append('sheet', choice.sheet);
  if (choice && choice.headerRow) body.append('headerRow', String(choice.headerRow));
  body.append('file', $('mapper-file').files[0]);
  say('suggest-message', 'reading the sheet…');
  const res = await fetch('/mapper/sheets', { method: 'POST', body });
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
  $('header-row').value = String(out.draft.headerRow || 1);
  if (!$('mapping-name').value) $('mapping-name').value = out.draft.name || '';
  $('mapper').hidden = false;
  $('run').disabled = true;
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
const chosenSheet = () => ($('sheet-choice-label').hidden ? '' : $('sheet-choice').value);
$('sheet-choice').addEventListener('change', () => suggest({ sheet: chosenSheet() }));
$('header-row').addEventListener('change', () => {
  const headerRow = Number($('header-row').value);
  if (!(Number.isInteger(headerRow) && headerRow >= 1 && headerRow <= 1000)) return;
  suggest({ sheet: chosenSheet(), headerRow });
});
$('sheet-form').addEventListener('submit', (e) => e.preventDefault());

$('columns').addEventListener('change', (e) => {
  const t = e.target;
  const i = Number(t.dataset.index);
  if (t.matches('select.field')) setField(i, t.value);
  else if (t.matches('select.type')) setType(i, t.value);
  else if (t.matches('input.format')) {
    if (t.value.trim()) state.draft.columns[i].format = t.value.trim();
    else delete state.draft.columns[i].format;
    changed();
  } else if (t.matches('select.decimal')) {
    if (t.value) state.draft.columns[i].decimal = t.value;
    else delete state.draft.columns[i].decimal;
    changed();
  } else if (t.matches('input.split')) {
    // Emptied: no separator (the cell is one value), not the one the samples show.
    state.draft.columns[i].split = t.value.trim() === '' ? '' : t.value;
    changed();
  } else if (t.matches('input.vkey, input.vval')) readValues(i);
});
$('columns').addEventListener('click', (e) => {
  const t = e.target;
  if (t.matches('button.add-pair')) addPair(Number(t.dataset.index));
  else if (t.matches('button.use-nearest')) addPair(Number(t.dataset.index), t.dataset.value, t.dataset.label);
});
$('preview-rows').addEventListener('change', refreshPreview);

$('save-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = $('mapping-name').value.trim();
  const { res, out } = await postJson('/mapper/mappings', {
    name,
    draft: { ...state.draft, name },
    overwrite: $('overwrite').checked,
  });
  if (!res.ok) {
    say('save-message', `not saved: ${problemsText(out)}`, 'err');
    return;
  }
  adopt(out.draft);
  state.saved = out.name;
  say('save-message', `saved as ${out.name} (${out.replaced ? 'replaced' : 'new'}: mappings/${out.file})`, 'ok');
  $('run').disabled = false;
});

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
  body.append('mode', $('mode').value);
  body.append('dryRun', $('dry-run').checked ? 'true' : 'false');
  body.append('file', $('mapper-file').files[0]);
  const res = await fetch('/uploads', { method: 'POST', body });
  const out = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) {
    say('run-outcome', `refused: ${out.error}`, 'err');
    return;
  }
  say('run-outcome', `queued as ${out.id}…`);
  for (;;) {
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
