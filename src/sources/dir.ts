/** The `dir` source: a local (or mounted) folder the supplier's files are dropped into. */
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { ProductSyncError } from '../errors.ts';
import { writeHashed } from './hash-file.ts';
import { patternRegExp } from './pattern.ts';
import type { AfterImport, DirSourceConfig, Source, SourceFile } from './source.ts';

/** The folder's path of `name`, refusing a name that would leave it (`..`, a separator). */
function inside(root: string, name: string): string {
  const path = resolve(root, name);
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || rel.includes(sep))
    throw new ProductSyncError('PS_ERR_SOURCE_REFUSED', `${name} is not a file of ${root}`);
  return path;
}

export function openDirSource(cfg: Pick<DirSourceConfig, 'dir' | 'pattern'>): Source {
  const root = resolve(cfg.dir);
  const re = patternRegExp(cfg.pattern);
  return {
    label: `dir:${cfg.dir}/${cfg.pattern}`,
    async list(signal) {
      // A missing folder lists nothing (the supplier has not dropped anything yet), as it always did.
      if (!existsSync(root)) return [];
      const out: SourceFile[] = [];
      let names: string[];
      try {
        names = await readdir(root);
      } catch (err) {
        throw new ProductSyncError(
          'PS_ERR_SOURCE_UNAVAILABLE',
          `${cfg.dir} cannot be listed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        );
      }
      for (const name of names) {
        signal?.throwIfAborted();
        if (!re.test(name)) continue;
        // Only regular files (or symlinks to them): a FIFO or a device would hang the copy; a dangling symlink, or a
        // file removed since readdir, is not listed either.
        const st = await stat(join(root, name)).catch(() => null);
        // The inode and change time move with any write or rename into place, even when size and mtime are put back.
        if (st?.isFile())
          out.push({ name, size: st.size, mtimeMs: Math.trunc(st.mtimeMs), change: `${st.ino}:${st.ctimeMs}` });
      }
      return out;
    },
    localPath: (file) => inside(root, file.name),
    async fetch(file, dest, options) {
      const path = inside(root, file.name);
      try {
        return await writeHashed(createReadStream(path), dest, { ...options, what: file.name });
      } catch (err) {
        if (err instanceof ProductSyncError) throw err;
        throw new ProductSyncError(
          'PS_ERR_SOURCE_UNAVAILABLE',
          `${join(cfg.dir, file.name)} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        );
      }
    },
    async afterImport(file: SourceFile, action: AfterImport) {
      const path = inside(root, file.name);
      if ('delete' in action) return unlink(path);
      const target = resolve(root, action.move);
      if (relative(root, target).startsWith('..'))
        throw new ProductSyncError('PS_ERR_SOURCE_REFUSED', `afterImport.move ${action.move} leaves ${cfg.dir}`);
      await mkdir(target, { recursive: true });
      await rename(path, join(target, file.name));
    },
    async close() {},
  };
}
