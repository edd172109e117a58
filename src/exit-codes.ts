import { ProductSyncError, RunInterrupted, type ErrorCode } from './errors.ts';
import { FileWriteError } from './fs-errors.ts';

/**
 * The exit codes of docs/commands.md ("Exit codes"), reconcile's own 4 among them: a script that runs reconcile as a
 * drift check tells "the API differs from the sheet" (1) from "no difference, but rows could not be compared" (4).
 */
export const EXIT = {
  ok: 0,
  rowsFailed: 1,
  invalidInvocation: 2,
  aborted: 3,
  /** reconcile: no difference counted (none, or --no-fail-on-diff), but some rows are invalid. */
  reconcileInvalidOnly: 4,
} as const;

const CODE_EXIT: Partial<Record<ErrorCode, number>> = {
  PS_ERR_CONFIG_INVALID: EXIT.invalidInvocation,
  PS_ERR_CLI_USAGE: EXIT.invalidInvocation,
  PS_ERR_MAPPING_INVALID: EXIT.invalidInvocation,
  PS_ERR_FEED_INVALID: EXIT.invalidInvocation,
  PS_ERR_FILE_UNREADABLE: EXIT.invalidInvocation,
  PS_ERR_FILE_TYPE: EXIT.invalidInvocation,
  PS_ERR_FILE_TOO_LARGE: EXIT.invalidInvocation,
  PS_ERR_FILE_HEADER: EXIT.invalidInvocation,
  PS_ERR_RUN_LOCKED: EXIT.invalidInvocation,
  PS_ERR_REDIS_UNREACHABLE: EXIT.invalidInvocation,
  PS_ERR_UNDO: EXIT.invalidInvocation,
  PS_ERR_UNDO_BLOCKED: EXIT.invalidInvocation,
  PS_ERR_SCOPE_MISSING: EXIT.invalidInvocation,
  // The environment said no before anything was sent; once writes were sent it is 3 (below): the run is to be resumed.
  PS_ERR_FILE_WRITE: EXIT.invalidInvocation,
};

/**
 * The exit code for an error that ended a command: 2 for bad input or environment (nothing sent), 3 for an aborted run.
 */
export function exitCodeFor(err: unknown): number {
  if (err instanceof RunInterrupted) return err.exitCode;
  if (err instanceof FileWriteError && err.writesSent) return EXIT.aborted;
  if (err instanceof ProductSyncError) return CODE_EXIT[err.code] ?? EXIT.aborted;
  return EXIT.aborted;
}
