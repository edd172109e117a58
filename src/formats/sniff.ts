import { open } from 'node:fs/promises';
import { ProductSyncError } from '../errors.ts';

/** What the first bytes say a file is. */
export type Sniffed = 'xlsx-zip' | 'text';

// Other files people attach by mistake, told apart by their first bytes.
const MAGIC: [Buffer, string][] = [
  [Buffer.from('%PDF'), 'a PDF document'],
  [Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'a PNG image'],
  [Buffer.from([0xff, 0xd8, 0xff]), 'a JPEG image'],
  [Buffer.from([0x1f, 0x8b]), 'a gzip archive'],
  [Buffer.from('Rar!'), 'a RAR archive'],
  [Buffer.from([0x37, 0x7a, 0xbc, 0xaf]), 'a 7-Zip archive'],
  [Buffer.from('{\\rtf'), 'an RTF document'],
];

/**
 * Reads the first bytes of a file and tells a zip (xlsx) from text; refuses OLE2 (.xls, encrypted workbooks), HTML, XML
 * and binaries.
 */
export async function sniffFile(file: string): Promise<{ kind: Sniffed; head: Buffer }> {
  const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: cannot open (${err.code ?? err.message})`, {
      cause: err,
    });
  });
  try {
    const head = Buffer.alloc(65_536);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const b = head.subarray(0, bytesRead);
    if (bytesRead === 0) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the file is empty`);
    // PK\x03\x04 opens a zip; PK\x05\x06 (empty) and PK\x07\x08 (spanned) too — the workbook inspection then says what
    // is wrong.
    if (b[0] === 0x50 && b[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes((b[2]! << 8) | b[3]!))
      return { kind: 'xlsx-zip', head: b };
    if (b[0] === 0xd0 && b[1] === 0xcf && b[2] === 0x11 && b[3] === 0xe0) {
      throw new ProductSyncError(
        'PS_ERR_FILE_TYPE',
        `${file}: this is an old Excel (.xls) or a password-protected workbook; save it as .xlsx (without a password) or CSV`,
      );
    }
    for (const [magic, what] of MAGIC) {
      if (b.subarray(0, magic.length).equals(magic))
        throw new ProductSyncError(
          'PS_ERR_FILE_TYPE',
          `${file}: this is ${what}, not a sheet; export the sheet as .xlsx or CSV`,
        );
    }
    const start = b
      .subarray(0, 512)
      .toString('latin1')
      .replace(/^\uFEFF|^ï»¿/, '')
      .trimStart()
      .toLowerCase();
    if (['<!doctype html', '<html', '<head', '<meta', '<body', '<table', '<?xml'].some((t) => start.startsWith(t))) {
      throw new ProductSyncError(
        'PS_ERR_FILE_TYPE',
        `${file}: this is an HTML or XML page saved with a spreadsheet name, not a workbook; open it in Excel and save it as .xlsx or CSV`,
      );
    }
    const isUtf16 = (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff);
    if (!isUtf16 && b.subarray(0, 8192).includes(0)) {
      throw new ProductSyncError(
        'PS_ERR_FILE_TYPE',
        `${file}: binary content that is neither a CSV/TSV text nor an .xlsx workbook`,
      );
    }
    return { kind: 'text', head: b };
  } finally {
    await fh.close();
  }
}
