import { spawnSync } from 'node:child_process';
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../src/pipeline/sync/journal.ts';
import { journalFile, journalLines as lines } from './helpers/journal.ts';

describe('journal writes', () => {
  it('puts a durable record (and everything before it) on disk before record returns; batches the rest until close', async () => {
    const file = journalFile();
    const j = await openJournal(file);
    j.record('create:1', 'planned');
    expect(statSync(file).size).toBe(0);
    j.record('create:1', 'sent', undefined, true);
    expect(lines(file).map((l) => JSON.parse(l))).toEqual([
      { op: 'create:1', s: 'planned' },
      { op: 'create:1', s: 'sent' },
    ]);
    j.record('create:1', 'confirmed', { id: 't1' });
    await j.close();
    expect(lines(file).at(-1)).toBe('{"op":"create:1","s":"confirmed","r":{"id":"t1"}}');
    await j.close();
    expect(() => j.record('create:2', 'sent')).toThrow(/closed/);
  });

  it('flushes batched records by itself within a short delay', async () => {
    const file = journalFile();
    const j = await openJournal(file);
    j.record('patch:1', 'confirmed');
    await new Promise((r) => setTimeout(r, 250));
    expect(lines(file)).toEqual(['{"op":"patch:1","s":"confirmed"}']);
    await j.close();
  });

  it('keeps a durable record through kill -9 of the writing process', () => {
    const file = journalFile();
    const script = `
      import { openJournal } from ${JSON.stringify(new URL('../src/pipeline/sync/journal.ts', import.meta.url).href)};
      const j = await openJournal(${JSON.stringify(file)});
      j.record('create:a', 'planned');
      j.record('create:a', 'sent', undefined, true);
      j.record('create:b', 'planned');
      process.kill(process.pid, 'SIGKILL');`;
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out.signal, out.stderr).toBe('SIGKILL');
    expect(lines(file)).toEqual(['{"op":"create:a","s":"planned"}', '{"op":"create:a","s":"sent"}']);
  });
});

describe('journal replay', () => {
  it('skips torn and foreign lines anywhere, keeps a complete last record without its newline, and appends on a new line', async () => {
    const file = journalFile();
    writeFileSync(
      file,
      [
        '{"op":"a","s":"sent"}',
        '{"op":"a","s":"confi',
        'not json',
        '{"op":"b","s":"exploded"}',
        '{"s":"sent"}',
        '',
        '{"op":"c","s":"failed","r":{"message":"400 tradeItemName: too long"}}',
        '{"op":"b","s":"confirmed","r":"t-b"}',
      ].join('\n'),
    );
    const j = await openJournal(file);
    expect([...j.entries()]).toEqual([
      ['a', { state: 'sent' }],
      ['c', { state: 'failed', result: { message: '400 tradeItemName: too long' } }],
      ['b', { state: 'confirmed', result: 't-b' }],
    ]);
    j.record('a', 'confirmed', 't-a', true);
    await j.close();
    expect(lines(file).slice(-2)).toEqual([
      '{"op":"b","s":"confirmed","r":"t-b"}',
      '{"op":"a","s":"confirmed","r":"t-a"}',
    ]);
    expect((await openJournal(file)).state('a')).toEqual({ state: 'confirmed', result: 't-a' });
  });

  it('replays a journal larger than its read chunk, multi-byte text cut across chunks included', async () => {
    const file = journalFile();
    const n = 40_000;
    const body: string[] = [];
    for (let i = 0; i < n; i++)
      body.push(
        JSON.stringify({ op: `create:${i}`, s: 'sent' }),
        JSON.stringify({ op: `create:${i}`, s: 'confirmed', r: { name: `Crème brûlée n°${i}` } }),
      );
    writeFileSync(file, `${body.join('\n')}\n`);
    expect(statSync(file).size).toBeGreaterThan(2 * (1 << 20));
    appendFileSync(file, '{"op":"create:0","s":"fail');
    const j = await openJournal(file);
    const all = [...j.entries()];
    expect(all).toHaveLength(n);
    expect(
      all.every(
        ([op, e], i) =>
          op === `create:${i}` &&
          e.state === 'confirmed' &&
          (e.result as { name: string }).name === `Crème brûlée n°${i}`,
      ),
    ).toBe(true);
    await j.close();
  });
});
