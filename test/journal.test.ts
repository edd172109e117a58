import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../src/pipeline/sync/journal.ts';

describe('journal', () => {
  it('replays the latest state of each operation, ignoring a torn last line', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ps-journal-')), 'journal.jsonl');
    const j = await openJournal(file);
    j.record('create:1', 'sent');
    j.record('create:1', 'confirmed', { tradeItemId: 't1' });
    j.record('create:2', 'sent');
    await j.close();
    appendFileSync(file, '{"op":"create:2","s":"confi');

    const again = await openJournal(file);
    expect(again.state('create:1')).toEqual({ state: 'confirmed', result: { tradeItemId: 't1' } });
    expect(again.state('create:2')).toEqual({ state: 'sent' });
    again.record('create:2', 'confirmed', { tradeItemId: 't2' });
    await again.close();
    const third = await openJournal(file);
    expect(third.state('create:2')).toEqual({ state: 'confirmed', result: { tradeItemId: 't2' } });
    expect([...third.entries()]).toHaveLength(2);
    await third.close();
  });
});
