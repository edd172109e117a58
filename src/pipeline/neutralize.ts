/** Formula-injection neutralisation (OWASP "CSV injection") for text written to CSV and XLSX reports. */

const DANGEROUS_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?(\d+([.,]\d+)?|[.,]\d+)([eE][+-]?\d+)?$/;

/**
 * Text safe to open in a spreadsheet: NUL removed; a value starting with `= + - @`, tab or CR gets a leading `'` so it is
 * shown, never evaluated — except a plain signed number such as `-12.5`, which stays readable as it is.
 */
export function neutralize(text: string): string {
  const clean = text.includes('\0') ? text.replace(/\0/g, '') : text;
  if (!DANGEROUS_START.test(clean) || PLAIN_NUMBER.test(clean)) return clean;
  return `'${clean}`;
}

/** One CSV field per RFC 4180: quoted when it holds the delimiter, a quote, CR or LF. */
export function csvField(text: string): string {
  const t = neutralize(text);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}
