// The five rules of the rules benches (bench/rules.ts, bench/rules-checker.ts): a name length, a net content below a
// bound, a unit given, a GTIN prefix, a name without markup. Each holds on every row of the benches' sheet.
export const FIVE_RULES = [
  { id: 'B-1', assert: '$length(tradeItemName) <= 60', severity: 'warning', message: 'long name' },
  { id: 'B-2', assert: '$number(netContents[0].value) < 5000', severity: 'error', message: 'heavy' },
  { id: 'B-3', assert: '$length(netContents[0].unitOfMeasure) > 0', severity: 'error', message: 'unit' },
  { id: 'B-4', assert: "$substring(gtin, 0, 3) != '000'", severity: 'warning', message: 'prefix' },
  { id: 'B-5', assert: "$not($contains(tradeItemName, '<'))", severity: 'warning', message: 'markup' },
] as const;
