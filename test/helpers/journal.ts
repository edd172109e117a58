// A journal file of a test's own, and its lines as written (src/pipeline/sync/journal.ts).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `journal.jsonl` in a fresh temporary directory (not created). */
export const journalFile = (): string => join(mkdtempSync(join(tmpdir(), 'ps-journal-')), 'journal.jsonl');

/** The non-empty lines of `file`. */
export const journalLines = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
