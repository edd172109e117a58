/** Spreadsheet column letters (A, Z, AA…) and the 1-based column numbers they stand for. */

/** The letters of a 1-based column number, as a spreadsheet shows them (1 → A, 27 → AA). */
export function columnLetters(n: number): string {
  let s = '';
  for (let c = n; c > 0; c = Math.floor((c - 1) / 26)) s = String.fromCharCode(65 + ((c - 1) % 26)) + s;
  return s;
}

/** The 1-based column number of column letters (`G` → 7, `aa` → 27). */
export function letterPosition(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/** Column number (1-based) of the letters that start a cell reference (`AB12` → 28); 0 when it starts with none. */
export function refColumn(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c >= 65 && c <= 90) n = n * 26 + (c - 64);
    else if (c >= 97 && c <= 122) n = n * 26 + (c - 96);
    else break;
  }
  return n;
}
