/** A function of src/ and its length (scripts/long-functions.mjs). */
export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}
export function functionLengths(dir: string): FunctionLength[];
