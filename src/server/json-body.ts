/**
 * JSON bodies of the console (the mapper's drafts): parsed, then scanned by secure-json-parse, which fastify uses as
 * well. A `__proto__` key (or a `constructor` holding a `prototype`) is refused as such — not as "not valid JSON", as
 * fastify's own parser says — because copying such an object would change the prototype of what it is copied into.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { scan } from 'secure-json-parse';

const CODE = 'PS_BODY_REFUSED';

const refused = (message: string) => Object.assign(new Error(message), { statusCode: 400, code: CODE });

/** Replaces fastify's JSON body parser on `app`; its refusals answer 400 `{error}` as the console's other ones. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    let body: unknown;
    try {
      body = JSON.parse(text as string);
    } catch (err) {
      done(refused(`the request body is not valid JSON: ${(err as Error).message}`), undefined);
      return;
    }
    try {
      if (body !== null && typeof body === 'object') scan(body, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      done(
        refused(
          'the request body has a "__proto__" key (or a "constructor" key holding a "prototype"): refused, as copying it would change the prototype of other objects; rename the key',
        ),
        undefined,
      );
      return;
    }
    done(null, body);
  });
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.code === CODE) return reply.code(400).send({ error: err.message });
    return reply.send(err);
  });
}
