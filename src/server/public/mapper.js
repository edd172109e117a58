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

function renderColumns() {
  const options = (selected) => {
    const choices = selected && !state.choices.includes(selected) ? [selected, ...state.choices] : state.choices;
    return [
      '<option value="">— not mapped —</option>',
      ...choices.map((c) => `<option${c === selected ? ' selected' : ''}>${esc(c)}</option>`),
    ].join('');
  };
  $('columns').innerHTML = state.draft.columns
    .map(
      (c, i) => `<tr data-header="${esc(c.header)}">
    <td>${c.position}</td><td><strong>${esc(c.header)}</strong></td><td class="samples">${c.samples.map(esc).join(' · ')}</td>
    <td><select class="field" data-index="${i}" aria-label="field of ${esc(c.header)}">${options(c.field)}</select></td>
    <td class="reason">${reasonHtml(c)}</td></tr>`,
    )
    .join('');
}

const SUGGESTED = ['field', 'type', 'lookup', 'split', 'format', 'decimal', 'reason', 'warning'];

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
  $('columns').querySelectorAll('tr')[i].querySelector('.reason').innerHTML = reasonHtml(c);
  state.saved = null;
  $('run').disabled = true;
  refreshPreview();
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
  if (!res.ok) {
    say('preview-status', problemsText(out), 'err');
    $('preview').innerHTML = '';
    return;
  }
  renderPreview(out.preview);
}

$('suggest-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = new FormData();
  body.append('target', $('target').value);
  if ($('language').value) body.append('language', $('language').value);
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
    saved: null,
  });
  const matched = out.draft.columns.filter((c) => c.field).length;
  say(
    'suggest-message',
    `${out.draft.columns.length} columns, ${matched} matched to a field; language ${out.draft.language}${out.draft.languageReason ? ` (${out.draft.languageReason})` : ''}`,
    'ok',
  );
  $('notes').innerHTML = (out.draft.notes || []).map((n) => `<li>${esc(n)}</li>`).join('');
  $('sheet-name').textContent = out.fileName;
  if (!$('mapping-name').value) $('mapping-name').value = out.draft.name || '';
  $('mapper').hidden = false;
  $('run').disabled = true;
  renderColumns();
  refreshPreview();
});

$('columns').addEventListener('change', (e) => {
  if (e.target.matches('select.field')) setField(Number(e.target.dataset.index), e.target.value);
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
