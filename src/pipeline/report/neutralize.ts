/** Formula-injection neutralisation (OWASP "CSV injection") for text written to CSV and XLSX reports. */

const DANGEROUS_START = /^[=+\-@\t\r]/;
// Only a plain negative decimal is let through: a spreadsheet shows it unchanged. `+1` is quoted like any `+` text, since a
// spreadsheet would drop its sign (phone numbers such as +33123456789 would lose it too).
const PLAIN_NEGATIVE_NUMBER = /^-(\d+([.,]\d+)?|[.,]\d+)$/;

/**
 * Text safe to open in a spreadsheet: NUL removed; a value starting with `= + - @`, tab or CR gets a leading `'` so it is
 * shown, never evaluated — except a plain negative number such as `-12.5` or `-3,75`, which stays readable as it is.
 */
export function neutralize(text: string): string {
  const clean = text.includes('\0') ? text.replace(/\0/g, '') : text;
  if (!DANGEROUS_START.test(clean) || PLAIN_NEGATIVE_NUMBER.test(clean)) return clean;
  return `'${clean}`;
}

/** One CSV field per RFC 4180 (after neutralize): quoted when it holds the delimiter, a quote, CR or LF. */
export function csvField(text: string): string {
  const t = neutralize(text);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}
