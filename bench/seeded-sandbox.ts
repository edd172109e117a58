// A sandbox (this process) whose owner already holds the brands of the 5-column bench sheet and, with `--items N`, the
// trade items of its first N rows exactly as an import of them stores them: a rerun of that sheet then finds every row
// unchanged, without first importing millions of rows over HTTP. Prints `listening <url>` once ready.
// `node --import tsx bench/seeded-sandbox.ts [--items N] [--latency ms]`
import { tradeItemIdFor } from '../src/api/uuid.ts';
import { findUnit } from '../src/api/units.ts';
import { toGtin14 } from '../src/pipeline/gtin.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { startSandbox } from '../src/sandbox/server.ts';
import { BRANDS, scaleCells } from './product-rows.ts';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const items = Number(opt('--items') ?? 0);
const latency = Number(opt('--latency') ?? 0);
const owner = DEMO_COMPANY_ID;

const sb = await startSandbox({ port: 0, admin: true, latencyMs: latency });
const store = sb.handle.store;
const brandIds: string[] = [];
for (let b = 0; b < BRANDS; b++) {
  const brandId = store.newId();
  store.brands.set(brandId, { brandId, companyId: owner, name: `Marque ${b}`, archived: false });
  brandIds.push(brandId);
}
const unitCode = new Map<string, string>();
for (let i = 0; i < items; i++) {
  const c = scaleCells(i);
  const gtin = toGtin14(c.gtin);
  let unit = unitCode.get(c.unit);
  if (unit === undefined) unitCode.set(c.unit, (unit = findUnit(c.unit)!.code));
  const tradeItemId = tradeItemIdFor(owner, gtin);
  store.tradeItems.set(tradeItemId, {
    tradeItemId,
    ownerCompanyId: owner,
    archived: false,
    fields: {
      gtin,
      tradeItemName: c.name,
      netContents: [{ value: c.weight.replace(',', '.'), unitOfMeasure: unit }],
      productLanguage: 'fr',
      brandId: brandIds[i % BRANDS],
    },
  });
}
process.stdout.write(`listening ${sb.url} (${items} items)\n`);
process.once('SIGTERM', () => void sb.close().then(() => process.exit(0)));
