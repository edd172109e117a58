/**
 * The OpenLineage view of a run from what product-sync knows of it (its settings, request, job): the job's name,
 * its datasets, its runId (openlineage.ts builds the events from it).
 */
import { basename } from 'node:path';
import type { Config } from '../config.ts';
import {
  apiDataset,
  lineageJobName,
  lineageRunId,
  sheetDataset,
  type LineageParent,
  type LineageRun,
} from './openlineage.ts';

/** The settings the events need; null when OPENLINEAGE_URL is unset (no event is made at all). */
export interface LineageSettings {
  namespace: string;
  apiUrl: string | undefined;
  owner: string | undefined;
}

export function lineageSettings(config: Config): LineageSettings | null {
  if (!config.OPENLINEAGE_URL) return null;
  return { namespace: config.OPENLINEAGE_NAMESPACE, apiUrl: config.PRODUCT_API_URL, owner: config.OWNER_COMPANY_ID };
}

/** What a run is, as far as its OpenLineage events go. */
export interface LineageRunFacts {
  /** What makes its runId (lineageRunId). */
  key: string;
  kind: LineageRun['kind'];
  mapping: string;
  feed?: string | undefined;
  /** Where the sheet is: its path, or a feed's remote URL (none: a queued chunk reads only its run's files). */
  source?: string;
  /** The owner company; unknown (a START before the mapping is read): no output dataset. */
  owner?: string | null | undefined;
  /** A run that sends nothing (validate, reconcile, a dry run) has no output dataset. */
  writes: boolean;
  nominalTime?: string | undefined;
  /** The job's name when it is not the run's own (lineageJobName): an undo's is the undone run's. */
  job?: string;
  parent?: LineageParent;
  facts: Record<string, string | undefined>;
}

export function lineageRun(s: LineageSettings, r: LineageRunFacts): LineageRun {
  const owner = r.owner ?? s.owner;
  return {
    runId: lineageRunId(r.key),
    namespace: s.namespace,
    job: r.job ?? lineageJobName(r.kind, basename(r.mapping), r.feed),
    kind: r.kind,
    input: r.source ? sheetDataset(r.source) : null,
    output: r.writes && s.apiUrl && owner ? apiDataset(s.apiUrl, owner) : null,
    ...(r.nominalTime ? { nominalTime: r.nominalTime } : {}),
    ...(r.parent ? { parent: r.parent } : {}),
    facts: r.facts,
  };
}
