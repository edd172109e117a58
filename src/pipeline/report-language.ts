/**
 * The language of a report (mapping `reportLanguage`, default the sheet's `language`): the messages of rejected.*,
 * issues.csv and the scorecard file come from one table per language keyed by issue code (messages/en.ts, fr.ts,
 * de.ts), so a report can go back to the supplier as it is. Placeholders (`{field}`) are the same in every table
 * (test/report-language.test.ts); a code a table lacks falls back to English, then to the code itself.
 */
import { ruleIdOf } from '../rule-catalogue.ts';
import type { Issue, Severity } from './types.ts';
import { DE } from './messages/de.ts';
import { EN } from './messages/en.ts';
import { FR } from './messages/fr.ts';

/** The languages reports are written in. */
export const REPORT_LANGUAGES = ['en', 'fr', 'de'] as const;
export type ReportLanguage = (typeof REPORT_LANGUAGES)[number];

/** The message tables, by language. */
export const MESSAGES: Readonly<Record<ReportLanguage, Readonly<Record<string, string>>>> = { en: EN, fr: FR, de: DE };

/** The words of a report around the messages: severities and the scorecard file's headers. */
export const WORDS = {
  en: {
    error: 'ERROR',
    warning: 'WARNING',
    mapping: 'mapping',
    feed: 'feed',
    run: 'run',
    finished: 'finished',
    file: 'file',
    rows: 'rows',
    score: 'score',
    grade: 'grade',
    validity: 'valid rows %',
    completeness: 'fields filled %',
    timeliness: 'on time',
    stability: 'stability',
    invalidRows: 'invalid rows',
    issues: 'main issues',
    yes: 'yes',
    no: 'no',
    none: '—',
    columnsAdded: 'columns added',
    columnsRemoved: 'columns removed',
    columnsRenamed: 'columns renamed',
  },
  fr: {
    error: 'ERREUR',
    warning: 'AVERTISSEMENT',
    mapping: 'correspondance',
    feed: 'flux',
    run: 'import',
    finished: 'terminé le',
    file: 'fichier',
    rows: 'lignes',
    score: 'note',
    grade: 'classe',
    validity: 'lignes valides %',
    completeness: 'champs remplis %',
    timeliness: "à l'heure",
    stability: 'stabilité',
    invalidRows: 'lignes invalides',
    issues: 'principaux problèmes',
    yes: 'oui',
    no: 'non',
    none: '—',
    columnsAdded: 'colonnes ajoutées',
    columnsRemoved: 'colonnes retirées',
    columnsRenamed: 'colonnes renommées',
  },
  de: {
    error: 'FEHLER',
    warning: 'WARNUNG',
    mapping: 'Zuordnung',
    feed: 'Feed',
    run: 'Import',
    finished: 'beendet am',
    file: 'Datei',
    rows: 'Zeilen',
    score: 'Punkte',
    grade: 'Note',
    validity: 'gültige Zeilen %',
    completeness: 'gefüllte Felder %',
    timeliness: 'pünktlich',
    stability: 'Stabilität',
    invalidRows: 'ungültige Zeilen',
    issues: 'häufigste Probleme',
    yes: 'ja',
    no: 'nein',
    none: '—',
    columnsAdded: 'Spalten hinzugefügt',
    columnsRemoved: 'Spalten entfernt',
    columnsRenamed: 'Spalten umbenannt',
  },
} as const satisfies Record<ReportLanguage, Record<string, string>>;

export type ReportWord = keyof (typeof WORDS)['en'];

/** The report language of a language code (`fr-FR` → fr); a language without a table reports in English. */
export function reportLanguageOf(code: string | undefined): ReportLanguage {
  const primary = (code ?? '').split(/[-_]/)[0]!.toLowerCase();
  return (REPORT_LANGUAGES as readonly string[]).includes(primary) ? (primary as ReportLanguage) : 'en';
}

/** The placeholders a message uses (`{field}`), sorted. */
export function placeholdersOf(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))].sort();
}

/** The message of an issue code in `lang`, its placeholders filled (`field`: the API field, else "the field"). */
export function issueMessage(lang: ReportLanguage, code: string, at: { field?: string | null } = {}): string {
  const text = MESSAGES[lang][code] ?? EN[code] ?? code;
  return text.replace(/\{field\}/g, at.field ?? FIELD_WORD[lang]);
}

const FIELD_WORD: Record<ReportLanguage, string> = { en: 'the field', fr: 'le champ', de: 'das Feld' };

/** A severity as a report writes it: ERROR / ERREUR / FEHLER… */
export function severityWord(lang: ReportLanguage, severity: Severity): string {
  return WORDS[lang][severity];
}

/**
 * Issues as one readable cell in `lang`, as report.ts's formatIssues writes them in English: `ERREUR GTIN_CHECK_DIGIT
 * [Code-barres] "5601234567890": la clé de contrôle du GTIN est fausse; …`. `redact` is applied to each text taken from
 * the sheet or an answer.
 */
export function formatIssuesIn(lang: ReportLanguage, issues: readonly Issue[], redact: (s: string) => string): string {
  let out = '';
  for (const i of issues) {
    if (out !== '') out += '; ';
    out += `${severityWord(lang, i.severity)} ${i.code}${i.column ? ` [${redact(i.column)}]` : ''}`;
    if (i.value !== null && i.value !== '') out += ` "${redact(i.value)}"`;
    out += `: ${issueMessage(lang, i.code, i)}`;
    // The API's or the run's own words (an answer of the API, a dropped field's first problem) are not the table's:
    // kept after the message, as they came.
    if (OWN_WORDS.has(i.code) && i.message) out += ` — ${redact(i.message)}`;
    const rule = ruleIdOf(i);
    if (rule !== null) out += ` (rule ${redact(rule)})`;
  }
  return out;
}

/** Codes whose issue message carries words the table cannot have: an API's answer, the first problem of a field. */
const OWN_WORDS: ReadonlySet<string> = new Set([
  'API_REJECTED',
  'API_CONFLICT',
  'API_FAILED',
  'REQUEST_INVALID',
  'FIELD_DROPPED',
  'BRAND_CREATE_FAILED',
  'NOT_ATTEMPTED',
  // the mapping's own rules: their messages are the catalogue owner's
  'USER_RULE',
  'USER_RULE_FAILED',
]);
