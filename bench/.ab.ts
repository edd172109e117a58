import { readFileSync } from 'node:fs';
import Papa from 'papaparse';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { validateDraft } from '../src/pipeline/map/validate.ts';
import * as neu from '../src/pipeline/map/map-row.ts';
import * as old from './.orig-map-row.ts';
const src = readFileSync(new URL('./read.ts', import.meta.url), 'utf8');
const M = src.slice(src.indexOf('const MAPPING = `') + 17, src.indexOf('`;', src.indexOf('const MAPPING = `')));
const mapping = parseMapping(M, 'x.yaml');
const parsed = Papa.parse<string[]>(readFileSync('bench/.data/read/products-100000.csv', 'utf8'), { delimiter: ';' }).data;
const headers = parsed[0]!; const rows = parsed.slice(1, 50001).map((cells, i) => ({ row: i + 2, cells, issues: [] }));
const idx = matchHeaders(headers, mapping);
const which = process.argv[2]!;
for (const [name, f] of [['old', old.mapRow], ['new', neu.mapRow]] as const) {
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    for (const r of rows) { const d = f(r as never, headers, mapping, idx); if (which === 'v') d.issues.push(...validateDraft(d)); }
    console.log(name, which, Math.round(rows.length / ((performance.now() - t0) / 1000)));
  }
}
console.log(JSON.stringify(old.mapRow(rows[5] as never, headers, mapping, idx)) === JSON.stringify(neu.mapRow(rows[5] as never, headers, mapping, idx)));
