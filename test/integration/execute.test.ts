import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/clients.ts';
import { gtinCheckDigit } from '../../src/pipeline/gtin.ts';
import { Executor, type ExecutedRow } from '../../src/pipeline/sync/execute.ts';
import { planRow, type ApiState } from '../../src/pipeline/sync/plan.ts';
import { Throttle } from '../../src/pipeline/sync/throttle.ts';
import type { Draft } from '../../src/pipeline/types.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';

const owner = DEMO_COMPANY_ID;
const gtin = (i: number) => {
  const body = `0400000${String(i).padStart(6, '0')}`;
  return body + gtinCheckDigit(body);
};
const draft = (i: number, name = `Produit ${i}`): Draft => ({
  row: i + 2,
  key: gtin(i),
  target: 'tradeItem',
  fields: { gtin: gtin(i), tradeItemName: name },
  clear: [],
  issues: [],
  source: [],
});
const empty = (): ApiState => ({ tradeItems: new Map(), manufacturedItems: new Map(), complete: true });

let sandbox: RunningSandbox;
let clients: ApiClients;
let throttle: Throttle;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  throttle = new Throttle(16);
  clients = createApiClients({
    productApiUrl: sandbox.url,
    referenceApiUrl: sandbox.url,
    credentials: { token: 'sandbox-token' },
    connections: 16,
    retry: { retries: 6, baseMs: 5, maxMs: 50 },
    // The sandbox, not the client's own check, must answer the 400 here.
    validate: false,
  });
});
afterAll(async () => {
  await clients?.close();
  await sandbox?.close();
});

/** An executor for the sandbox's owner (`options` added or overriding), its rows' outcomes in `results`. */
function executor(options: Partial<ConstructorParameters<typeof Executor>[0]> = {}) {
  const results: ExecutedRow[] = [];
  const ex = new Executor({
    api: clients.product,
    ownerCompanyId: owner,
    throttle,
    onResult: (r) => results.push(r),
    ...options,
  });
  return { ex, results };
}

async function execute(drafts: Draft[], state: ApiState): Promise<{ results: ExecutedRow[]; ex: Executor }> {
  const { ex, results } = executor({ circuitThreshold: 50 });
  await ex.run(
    drafts.map((d) => planRow(d, state, { target: 'tradeItem', mode: 'upsert', ownerCompanyId: owner, key: 'gtin' })),
  );
  return { results, ex };
}

describe('executor against the sandbox with faults', () => {
  it('creates each item exactly once under 503, 429, 500-after-commit and resets, one outcome per row', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({
      rate503: 0.1,
      rate429: 0.05,
      retryAfterSeconds: 0,
      rate500After: 0.05,
      rateReset: 0.05,
      seed: 7,
    });
    const drafts = Array.from({ length: 150 }, (_, i) => draft(i));
    const { results } = await execute(drafts, empty());
    sandbox.handle.setFaults({});
    expect(results).toHaveLength(150);
    expect(new Set(results.map((r) => r.row)).size).toBe(150);
    expect(results.filter((r) => r.outcome !== 'created').map((r) => r.issues)).toEqual([]);
    const items = sandbox.handle.store.dump().tradeItems;
    expect(items).toHaveLength(150);
    expect(new Set(items.map((t) => t.gtin)).size).toBe(150);
    const byGtin = new Map(items.map((t) => [t.gtin, t.tradeItemId]));
    for (const r of results) expect(r.tradeItemId).toBe(byGtin.get(r.key!));
    expect(sandbox.handle.counts().faults['500after'] ?? 0).toBeGreaterThan(0);
  });

  it('reports the API words on a 400 and carries on with the other rows', async () => {
    sandbox.handle.reset();
    const bad: Draft = {
      ...draft(1),
      fields: { gtin: gtin(1), tradeItemName: 'ok', drainedNetWeight: { value: 1, unitOfMeasure: 'not-a-unit' } },
    };
    const { results } = await execute([bad, draft(2)], empty());
    const failed = results.find((r) => r.row === bad.row)!;
    expect(failed.outcome).toBe('failed');
    expect(failed.issues[0]).toMatchObject({ code: 'API_REJECTED' });
    expect(failed.issues[0]!.message).toContain('drainedNetWeight');
    // The id the create asked for was never made: the report names none.
    expect(failed.tradeItemId).toBeNull();
    expect(results.find((r) => r.row === draft(2).row)!.outcome).toBe('created');
  });

  it('an update the API committed but answered 500 to, every time, is reported updated — as the API holds it', async () => {
    sandbox.handle.reset();
    await execute([draft(1)], empty());
    const record = sandbox.handle.store.dump().tradeItems[0]!;
    const state: ApiState = {
      tradeItems: new Map([
        [gtin(1).padStart(14, '0'), { ...record, ...(record as unknown as { fields?: object }).fields } as never],
      ]),
      manufacturedItems: new Map(),
      complete: true,
    };
    const plan = planRow(draft(1, 'Produit renommé'), state, {
      target: 'tradeItem',
      mode: 'upsert',
      ownerCompanyId: owner,
      key: 'gtin',
    });
    expect(plan.action).toBe('update');
    // Every attempt of the PATCH (the first and its 6 retries) is committed, then answered 500.
    sandbox.handle.setFaults({ sequence: Array(7).fill('500after') });
    const { ex, results } = executor();
    await ex.run([plan]);
    sandbox.handle.setFaults({});
    expect(sandbox.handle.counts().faults['500after']).toBe(7);
    expect(sandbox.handle.store.dump().tradeItems[0]!.tradeItemName).toBe('Produit renommé');
    expect(results).toMatchObject([{ outcome: 'updated', tradeItemId: record.tradeItemId, issues: [] }]);
  });

  it('a create an earlier attempt sent is claimed only when the item found is surely its own', async () => {
    sandbox.handle.reset();
    sandbox.handle.setAssignIds(true);
    try {
      // Another run created the item meanwhile; the API assigned its own id.
      await execute([draft(5, 'made by another run')], empty());
      const [theirs] = sandbox.handle.store.dump().tradeItems;
      const plan = planRow(draft(5), empty(), {
        target: 'tradeItem',
        mode: 'upsert',
        ownerCompanyId: owner,
        key: 'gtin',
      });
      const journal = () => {
        const states = new Map<string, { state: string; result?: unknown }>([
          [`${plan.key}:0:tradeItem.create`, { state: 'sent' }],
        ]);
        return {
          state: (id: string) => states.get(id),
          record: (id: string, state: string, result?: unknown) => void states.set(id, { state, result }),
        };
      };
      // Taken as possibly its own, the item found is compared with what the create sent: it holds another name, so
      // that field is updated and the row reported updated (never `created` for an item holding other values).
      for (const [ours, outcome] of [
        [false, 'failed'],
        [true, 'updated'],
      ] as const) {
        const { ex, results } = executor({ journal: journal(), earlierCreatesOurs: ours });
        await ex.run([plan]);
        expect(results[0]!.outcome, `earlierCreatesOurs ${ours}`).toBe(outcome);
        expect(results[0]!.tradeItemId).toBe(theirs!.tradeItemId);
      }
      // Nothing was sent again: still one item.
      expect(sandbox.handle.store.dump().tradeItems).toHaveLength(1);
    } finally {
      sandbox.handle.setAssignIds(false);
    }
  });

  it('opens the circuit on sustained 503s and leaves the remaining rows not attempted', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ rate503: 1, retryAfterSeconds: 0 });
    const { ex, results } = executor({ throttle: new Throttle(2), circuitThreshold: 3 });
    await ex.run(
      Array.from({ length: 20 }, (_, i) =>
        planRow(draft(i), empty(), { target: 'tradeItem', mode: 'upsert', ownerCompanyId: owner, key: 'gtin' }),
      ),
    );
    sandbox.handle.setFaults({});
    expect(ex.abortReason?.code).toBe('PS_ERR_CIRCUIT_OPEN');
    expect(results).toHaveLength(20);
    expect(results.filter((r) => r.outcome === 'not_attempted').length).toBeGreaterThan(10);
    expect(sandbox.handle.store.dump().tradeItems).toHaveLength(0);
  });
});

describe('a create refused as a duplicate (409)', () => {
  it('is claimed as this run’s only when the item holds what was sent; otherwise the fields that differ are updated and the row reported updated', async () => {
    sandbox.handle.reset();
    // Planned against an empty API; meanwhile another writer created two of the items (with the ids this run asks for,
    // an API that honours them answers the creates 409): one as this sheet has it, one with another name.
    const drafts = [draft(1), draft(2), draft(3)];
    const plans = drafts.map((d) =>
      planRow(d, empty(), { target: 'tradeItem', mode: 'upsert', ownerCompanyId: owner, key: 'gtin' }),
    );
    const bodyOf = (i: number) => (plans[i]!.steps[0] as { body: Record<string, unknown> }).body;
    await clients.product.createTradeItem(bodyOf(0));
    await clients.product.createTradeItem({
      ...bodyOf(1),
      tradeItemName: 'Written by another run',
    });
    const { ex, results } = executor();
    await ex.run(plans);
    const byRow = new Map(results.map((r) => [r.row, r]));
    expect(byRow.get(3)).toMatchObject({ outcome: 'created', tradeItemId: plans[0]!.tradeItemId });
    expect(byRow.get(4)).toMatchObject({
      outcome: 'updated',
      tradeItemId: plans[1]!.tradeItemId,
      changedFields: ['tradeItemName'],
    });
    expect(byRow.get(5)).toMatchObject({ outcome: 'created' });
    const names = new Map(sandbox.handle.store.dump().tradeItems.map((t) => [t.tradeItemId, t.tradeItemName]));
    expect(names.get(plans[1]!.tradeItemId!)).toBe('Produit 2');
    // The undo ledger of the updated row puts the other writer's name back; it does not archive that writer's item.
    expect(plans[1]!.undo).toMatchObject({
      created: [],
      fields: [{ item: 'tradeItem', field: 'tradeItemName', before: 'Written by another run', sent: 'Produit 2' }],
    });
  });
});
