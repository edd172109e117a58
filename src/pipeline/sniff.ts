import { open } from 'node:fs/promises';
import { ProductSyncError } from '../errors.ts';

/** What the first bytes say a file is. */
export type Sniffed = 'xlsx-zip' | 'text';

/** Reads the first bytes of a file and tells a zip (xlsx) from text; refuses OLE2 (.xls, encrypted workbooks), HTML, XML and binaries. */
export async function sniffFile(file: string): Promise<{ kind: Sniffed; head: Buffer }> {
  const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: cannot open (${err.code ?? err.message})`, { cause: err });
  });
  try {
    const head = Buffer.alloc(65_536);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const b = head.subarray(0, bytesRead);
    if (bytesRead === 0) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the file is empty`);
    if (b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04) return { kind: 'xlsx-zip', head: b };
    if (b[0] === 0xd0 && b[1] === 0xcf && b[2] === 0x11 && b[3] === 0xe0) {
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: this is an old Excel (.xls) or a password-protected workbook; save it as .xlsx (without a password) or CSV`);
    }
    const start = b.subarray(0, 512).toString('latin1').replace(/^\uFEFF|^ï»¿/, '').trimStart().toLowerCase();
    if (start.startsWith('<!doctype html') || start.startsWith('<html') || start.startsWith('<?xml') || start.startsWith('<table')) {
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: this is an HTML or XML page saved with a spreadsheet name, not a workbook; open it in Excel and save it as .xlsx or CSV`);
    }
    const isUtf16 = (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff);
    if (!isUtf16 && b.subarray(0, 8192).includes(0)) {
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: binary content that is neither a CSV/TSV text nor an .xlsx workbook`);
    }
    return { kind: 'text', head: b };
  } finally {
    await fh.close();
  }
}
