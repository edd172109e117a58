/**
 * A sheet upload to the console (multipart, one file): stored under a generated name in a given directory, its type
 * sniffed from its bytes (a type `import` refuses is refused with its message, 400), its size capped; nothing refused,
 * failed or aborted stays on disk.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProductSyncError } from '../errors.ts';
import { sniffFile } from '../formats/sniff.ts';

/** An HTTP answer: status code and JSON body. */
export interface Answer {
  code: number;
  body: object;
}

/** A received upload: the stored file (generated name) and the form's other fields. */
export interface Upload {
  path: string;
  /** The client's file name: only ever shown, never used as a path. */
  name: string;
  fields: Record<string, string>;
}

const answer = (code: number, body: object): Answer => ({ code, body });

/**
 * The answer to an upload refused as `import` would refuse its file or mapping (the input gate, or the sniff of the
 * bytes as they arrive): 400 with the import's message and code, the stored file named by the client's name.
 */
export function refusedInput(err: ProductSyncError, upload: Pick<Upload, 'path' | 'name'>): Answer {
  return answer(400, { error: err.message.split(upload.path).join(upload.name), code: err.code });
}

/**
 * Reads the parts of a multipart request: the one file into `dir` (its path added to `written` at once), the fields.
 */
async function receive(
  req: FastifyRequest,
  dir: string,
  maxUpload: number,
  written: Set<string>,
): Promise<Upload | Answer> {
  const fields: Record<string, string> = {};
  let stored: { path: string; name: string } | null = null;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        // One file per upload: a second one is refused before any of it is written.
        if (stored)
          throw Object.assign(new Error('one file per upload (form field "file")'), { code: 'FST_FILES_LIMIT' });
        const tmp = join(dir, `.${randomUUID()}.part`);
        written.add(tmp);
        await pipeline(part.file, createWriteStream(tmp));
        if (part.file.truncated) return answer(413, { error: `file larger than ${maxUpload} bytes` });
        let kind: string;
        try {
          kind = (await sniffFile(tmp)).kind === 'xlsx-zip' ? '.xlsx' : '.csv';
        } catch (err) {
          if (err instanceof ProductSyncError) return refusedInput(err, { path: tmp, name: part.filename });
          throw err;
        }
        // Stored under a generated name: the client's file name is only ever shown, never used as a path.
        const path = join(dir, `${randomUUID()}${kind}`);
        written.add(path);
        await rename(tmp, path);
        written.delete(tmp);
        stored = { path, name: part.filename };
      } else {
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    const e = err as { code?: string; message: string };
    return answer(e.code === 'FST_REQ_FILE_TOO_LARGE' ? 413 : 400, { error: e.message });
  }
  if (!req.raw.complete) return answer(400, { error: 'upload aborted' });
  if (!stored) return answer(400, { error: 'no file in the upload (form field "file")' });
  return { ...stored, fields };
}

/**
 * Receives a sheet into `dir` and answers what `use` says of it; the file is kept only when `use` answers `keep: true`.
 * A refused, failed or aborted upload removes every file it wrote (the `.part` being written, a file already stored
 * when a second one arrives), and the answer is sent only once they are gone.
 */
export async function handleUpload(
  req: FastifyRequest,
  reply: FastifyReply,
  dir: string,
  maxUpload: number,
  use: (upload: Upload) => Promise<Answer & { keep?: boolean }>,
): Promise<FastifyReply> {
  const written = new Set<string>();
  const discard = async (): Promise<void> => {
    await Promise.all([...written].map((f) => rm(f, { force: true }).catch(() => {})));
  };
  // A client that goes away mid-body: the file stream may never end nor fail, so the request's own close does it.
  const aborted = (): void => {
    if (!req.raw.complete) void discard();
  };
  req.raw.once('close', aborted);
  let keep = false;
  let result: Answer;
  try {
    const got = await receive(req, dir, maxUpload, written);
    if ('code' in got) {
      result = got;
    } else {
      const used = await use(got);
      keep = used.keep === true;
      result = used;
    }
  } finally {
    req.raw.off('close', aborted);
    if (!keep) await discard();
  }
  return reply.code(result.code).send(result.body);
}
