/**
 * A mapping file's problems (or a rules file's, or a feed's rules), each with its file and line: PS_ERR_MAPPING_INVALID
 * (exit 2, nothing sent).
 */
import { ProductSyncError } from '../../errors.ts';

/** One problem of a mapping file, with the line that has it. */
export interface MappingProblem {
  line: number | null;
  path: string;
  message: string;
}

/** PS_ERR_MAPPING_INVALID with each problem and its line (the message lists them as `file:line: path: message`). */
export class MappingError extends ProductSyncError {
  readonly file: string;
  readonly problems: readonly MappingProblem[];
  constructor(file: string, problems: readonly MappingProblem[], what: 'mapping' | 'rules file' = 'mapping') {
    const lines = problems.map(
      (p) => `  ${file}${p.line === null ? '' : `:${p.line}`}: ${p.path ? `${p.path}: ` : ''}${p.message}`,
    );
    super(
      'PS_ERR_MAPPING_INVALID',
      `invalid ${what} ${file} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.name = 'MappingError';
    this.file = file;
    this.problems = problems;
  }
}
