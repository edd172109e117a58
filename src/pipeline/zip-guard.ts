import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import { ProductSyncError } from '../errors.ts';
import type { ReadLimits } from './limits.ts';

interface ZipEntry {
  name: string;
  method: number;
  compressed: number;
  uncompressed: number;
  localHeader: number;
}

/** The entries of a zip from its central directory (read from the end of the file, before anything is inflated). */
async function centralDirectory(file: string): Promise<ZipEntry[]> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 65_557);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook is truncated or damaged (no zip directory at its end); ask for the file again`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (cdOffset + cdSize > size) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook is truncated or damaged (zip directory out of the file)`);
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count && p + 46 <= cd.length; i++) {
      if (cd.readUInt32LE(p) !== 0x02014b50) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook's zip directory is damaged`);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      entries.push({
        method: cd.readUInt16LE(p + 10),
        compressed: cd.readUInt32LE(p + 20),
        uncompressed: cd.readUInt32LE(p + 24),
        localHeader: cd.readUInt32LE(p + 42),
        name: cd.toString('utf8', p + 46, p + 46 + nameLen),
      });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** The first `max` bytes of an entry, inflated. */
async function entryHead(file: string, e: ZipEntry, max: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const local = Buffer.alloc(30);
    await fh.read(local, 0, 30, e.localHeader);
    const start = e.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const raw = Buffer.alloc(Math.min(e.compressed, max * 4 + 1024));
    await fh.read(raw, 0, raw.length, start);
    if (e.method === 0) return raw.subarray(0, max).toString('utf8');
    return await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      let n = 0;
      const inflate = createInflateRaw();
      inflate.on('data', (c: Buffer) => {
        chunks.push(c);
        n += c.length;
        if (n >= max) inflate.destroy();
      });
      const done = () => resolve(Buffer.concat(chunks).subarray(0, max).toString('utf8'));
      inflate.on('close', done);
      inflate.on('error', done);
      inflate.end(raw);
    });
  } finally {
    await fh.close();
  }
}

/**
 * Checks a workbook before streaming it: a spreadsheet's parts are there, declared sizes within the caps (total and ratio:
 * zip bombs), and no XML part declares a DOCTYPE or entities (billion laughs, external entities).
 */
export async function guardWorkbookZip(file: string, limits: ReadLimits): Promise<void> {
  const entries = await centralDirectory(file);
  const names = new Set(entries.map((e) => e.name));
  if (!names.has('xl/workbook.xml')) {
    const what = names.has('word/document.xml') ? 'a Word document' : names.has('content.xml') ? 'an OpenDocument file (.ods)' : 'a zip that is not an Excel workbook';
    throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: this is ${what}; save the sheet as .xlsx or CSV`);
  }
  if (names.has('EncryptedPackage')) throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: the workbook is password-protected; save it without a password`);
  let total = 0;
  for (const e of entries) {
    total += e.uncompressed;
    if (e.compressed > 0 && e.uncompressed / e.compressed > limits.compressionRatio && e.uncompressed > 10 * 1024 * 1024) {
      throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${e.name} inflates ${Math.round(e.uncompressed / e.compressed)}× (more than ${limits.compressionRatio}×): refused as a possible zip bomb`);
    }
  }
  if (total > limits.unzippedBytes) {
    throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${Math.round(total / 1024 ** 2)} MB once unzipped, more than ${Math.round(limits.unzippedBytes / 1024 ** 2)} MB`);
  }
  for (const e of entries) {
    if (!/\.(xml|rels)$/i.test(e.name)) continue;
    const head = await entryHead(file, e, 2048);
    if (/<!DOCTYPE|<!ENTITY/i.test(head)) {
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: ${e.name} declares XML entities (DOCTYPE); refused — a workbook saved by Excel never does`);
    }
  }
}
