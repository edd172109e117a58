import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../src/pipeline/sync/journal.ts';
import { journalFile, journalLines as lines } from './helpers/journal.ts';

describe('a journal opened with batchDurable', () => {
  it('writes the durable records of one turn together, each on disk before its promise resolves', async () => {
    const file = journalFile();
    const j = await openJournal(file, { batchDurable: true });
    j.record('create:1', 'planned');
    const first = j.record('create:1', 'sent', undefined, true);
    const second = j.record('create:2', 'sent', undefined, true);
    expect(first).toBeInstanceOf(Promise);
    // Nothing written yet: the records wait for the end of this turn of the event loop…
    expect(statSync(file).size).toBe(0);
    expect(j.state('create:2')).toEqual({ state: 'sent' });
    await first;
    // …then go out in one write, in the order they were made, before either promise resolves.
    expect(lines(file)).toEqual([
      '{"op":"create:1","s":"planned"}',
      '{"op":"create:1","s":"sent"}',
      '{"op":"create:2","s":"sent"}',
    ]);
    await second;
    j.record('create:1', 'confirmed', { id: 't1' });
    expect(lines(file)).toHaveLength(3);
    await j.record('create:3', 'sent', undefined, true);
    expect(lines(file).slice(-2)).toEqual([
      '{"op":"create:1","s":"confirmed","r":{"id":"t1"}}',
      '{"op":"create:3","s":"sent"}',
    ]);
    await j.close();
  });

  it('writes a durable record still waiting when the journal is closed', async () => {
    const file = journalFile();
    const j = await openJournal(file, { batchDurable: true });
    const sent = j.record('create:1', 'sent', undefined, true);
    await j.close();
    await sent;
    expect(lines(file)).toEqual(['{"op":"create:1","s":"sent"}']);
  });
});
