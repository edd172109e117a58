// Lists the functions of src/ longer than a limit (default 200 lines), longest first: `node scripts/long-functions.mjs
// [limit]`. test/function-length.test.ts holds src/ to the limit (the sandbox's seed data aside).
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Every function (declaration, expression, arrow, method) of the .ts files under `dir`, with its length in lines. */
export function functionLengths(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) measure(p);
    }
  };
  const measure = (file) => {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.end).line;
        const name =
          node.name?.getText(sf) ??
          (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent)
            ? node.parent.name.getText(sf)
            : '(anonymous)');
        out.push({ file: relative(process.cwd(), file), name, line: start + 1, lines: end - start + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  };
  walk(dir);
  return out.sort((a, b) => b.lines - a.lines);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const limit = Number(process.argv[2] ?? 200);
  for (const f of functionLengths('src').filter((f) => f.lines > limit))
    console.log(`${String(f.lines).padStart(5)}  ${f.file}:${f.line}  ${f.name}`);
}
