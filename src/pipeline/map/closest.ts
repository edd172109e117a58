/** The word a misspelt name most likely meant: field names, list names, columns. */

/** Edit distance of two words (case ignored), capped: enough to tell a typo from another word. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[y.length]!;
}

/** The candidate `word` most likely misspells (case, a letter or two, a missing or extra `s`), or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const max = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= max ? best : undefined;
}
