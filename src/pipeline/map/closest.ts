/** The word a misspelt name most likely meant: field names, list names, columns. */
import { editDistance } from '../../edit-distance.ts';

/** The candidate `word` most likely misspells (case, a letter or two, a missing or extra `s`), or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const max = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= max ? best : undefined;
}
