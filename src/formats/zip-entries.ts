/**
 * The entries of a zip (an XLSX): its central directory, and an entry's bytes inflated. zip-guard.ts inspects every
 * entry with these; the worksheet reader (xlsx-worksheet.ts) reads the parts it needs with them, in any order.
 */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { ProductSyncError } from '../errors.ts';

/** An entry of a zip as its central directory lists it. */
export interface ZipEntry {
  name: string;
  method: number;
  compressed: number;
  uncompressed: number;
  localHeader: number;
}

/** The file-level error of a damaged zip. */
export const damaged = (file: string, why: string): ProductSyncError =>
  new ProductSyncError(
    'PS_ERR_FILE_UNREADABLE',
    `${file}: the workbook is damaged or truncated (${why}); ask for the file again, or open it in Excel and save it again as .xlsx`,
  );

/**
 * The entries of a zip from its central directory (read from the end of the file, before anything is inflated); more
 * than `maxEntries` are refused from the end record, before the directory is read.
 */
export async function centralDirectory(file: string, fh: FileHandle, maxEntries = Infinity): Promise<ZipEntry[]> {
  const { size } = await fh.stat();
  const tailLen = Math.min(size, 65_557);
  const tail = Buffer.alloc(tailLen);
  await fh.read(tail, 0, tailLen, size - tailLen);
  const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || eocd + 22 > tail.length) throw damaged(file, 'no zip directory at its end');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    // Zip64: the real values are in the zip64 end record, found through the locator just before the end record.
    const loc = eocd - 20;
    if (loc < 0 || tail.readUInt32LE(loc) !== 0x07064b50) throw damaged(file, 'zip64 directory locator missing');
    const recAt = Number(tail.readBigUInt64LE(loc + 8));
    const rec = Buffer.alloc(56);
    await fh.read(rec, 0, 56, recAt);
    if (rec.readUInt32LE(0) !== 0x06064b50) throw damaged(file, 'zip64 directory record missing');
    count = Number(rec.readBigUInt64LE(32));
    cdSize = Number(rec.readBigUInt64LE(40));
    cdOffset = Number(rec.readBigUInt64LE(48));
  }
  if (count > maxEntries)
    throw new ProductSyncError(
      'PS_ERR_FILE_TOO_LARGE',
      `${file}: the zip holds ${count} entries, more than the ${maxEntries} any real workbook has: refused before reading them (a workbook saved by Excel has a few parts per worksheet and one per picture)`,
    );
  if (cdOffset + cdSize > size || cdSize > 64 * 1024 * 1024) throw damaged(file, 'zip directory out of the file');
  const cd = Buffer.alloc(cdSize);
  await fh.read(cd, 0, cdSize, cdOffset);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw damaged(file, 'zip directory entry unreadable');
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const e: ZipEntry = {
      method: cd.readUInt16LE(p + 10),
      compressed: cd.readUInt32LE(p + 20),
      uncompressed: cd.readUInt32LE(p + 24),
      localHeader: cd.readUInt32LE(p + 42),
      name: cd.toString('utf8', p + 46, p + 46 + nameLen),
    };
    // Zip64 extra field (0x0001): the 64-bit values, in this order, of the fields that are 0xffffffff.
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      const id = cd.readUInt16LE(x);
      const len = cd.readUInt16LE(x + 2);
      if (id === 0x0001) {
        let q = x + 4;
        const next = () => {
          const v = q + 8 <= x + 4 + len ? Number(cd.readBigUInt64LE(q)) : NaN;
          q += 8;
          return v;
        };
        if (e.uncompressed === 0xffffffff) e.uncompressed = next();
        if (e.compressed === 0xffffffff) e.compressed = next();
        if (e.localHeader === 0xffffffff) e.localHeader = next();
      }
      x += 4 + len;
    }
    if (![e.uncompressed, e.compressed, e.localHeader].every(Number.isFinite))
      throw damaged(file, `zip entry ${e.name} unreadable`);
    if (e.localHeader + 30 + e.compressed > size) throw damaged(file, `${e.name} runs past the end of the file`);
    entries.push(e);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** The bytes `[start, start + length)` of the file in pieces of up to 1 MB. */
export async function* readRange(fh: FileHandle, start: number, length: number): AsyncGenerator<Buffer> {
  for (let pos = start, end = start + length; pos < end;) {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, end - pos));
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
  }
}

/** Where the data of entry `e` starts in the file (after its local header), checked. */
export async function entryStart(file: string, fh: FileHandle, e: ZipEntry): Promise<number> {
  const local = Buffer.alloc(30);
  await fh.read(local, 0, 30, e.localHeader);
  if (local.readUInt32LE(0) !== 0x04034b50) throw damaged(file, `no local header for ${e.name}`);
  return e.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
}

/**
 * The raw bytes of an entry, inflated when it is deflated (in pieces of up to 1 MB); a method Excel never writes is
 * refused.
 */
export async function entryStream(
  file: string,
  fh: FileHandle,
  e: ZipEntry,
): Promise<{ source: Readable; raw: Readable }> {
  const start = await entryStart(file, fh, e);
  if (e.method !== 0 && e.method !== 8)
    throw new ProductSyncError(
      'PS_ERR_FILE_TYPE',
      `${file}: ${e.name} uses a zip compression method (${e.method}) that Excel does not write; save the sheet again as .xlsx`,
    );
  const raw = Readable.from(readRange(fh, start, e.compressed));
  return {
    raw,
    source:
      e.method === 0 || e.compressed === 0
        ? raw
        : raw.pipe(
            // A small entry gets a small output buffer: 1 MB for each made many small parts slow (docs/performance.md).
            createInflateRaw({ chunkSize: Math.min(1 << 20, Math.max(16 * 1024, e.uncompressed + 1024)) }),
          ),
  };
}

/**
 * The inflated bytes of an entry, in pieces, never more than it declares (the inspection refuses a lying entry; this
 * stops reading it here as well). Damage (a bad deflate stream, a short entry) is thrown as `damaged`.
 */
export async function* entryChunks(file: string, fh: FileHandle, e: ZipEntry): AsyncGenerator<Buffer> {
  const { source, raw } = await entryStream(file, fh, e);
  let out = 0;
  try {
    for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      out += chunk.length;
      if (out > e.uncompressed) throw damaged(file, `${e.name} inflates past the size its zip entry declares`);
      yield chunk;
    }
  } catch (err) {
    if (err instanceof ProductSyncError) throw err;
    throw damaged(file, `${e.name}: ${(err as Error).message}`);
  } finally {
    raw.destroy();
    source.destroy();
  }
  if (out < e.uncompressed) throw damaged(file, `${e.name} is shorter than its zip entry declares`);
}

/** A small entry's whole text (UTF-8), refused past `maxBytes`. */
export async function entryText(file: string, fh: FileHandle, e: ZipEntry, maxBytes: number): Promise<string> {
  if (e.uncompressed > maxBytes)
    throw new ProductSyncError(
      'PS_ERR_FILE_TOO_LARGE',
      `${file}: ${e.name} is larger than ${Math.round(maxBytes / 1024 ** 2)} MB`,
    );
  const parts: Buffer[] = [];
  for await (const chunk of entryChunks(file, fh, e)) parts.push(chunk);
  return Buffer.concat(parts).toString('utf8');
}
