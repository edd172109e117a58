import type { FastifyInstance } from 'fastify';
import { faultSpecSchema, parseFaultSpec, type FaultSpec } from './faults.ts';
import type { SandboxHandle } from './handle.ts';
import { badRequest, invalid } from './problem.ts';

/** Test-only routes under /__admin (registered only with `admin: true`; no credential, never faulted). */
export function registerAdminRoutes(app: FastifyInstance, handle: SandboxHandle): void {
  app.post('/__admin/reset', async () => {
    handle.reset();
    return { ok: true };
  });
  app.get('/__admin/state', async () => handle.store.dump());
  app.get('/__admin/requests', async () => handle.counts());
  app.post('/__admin/faults', async (req, reply) => {
    const body = req.body as { spec?: unknown } | FaultSpec | undefined;
    let spec: FaultSpec;
    try {
      if (body && typeof body === 'object' && 'spec' in body && typeof body.spec === 'string')
        spec = parseFaultSpec(body.spec);
      else if (body && typeof body === 'object' && !Array.isArray(body)) {
        const parsed = faultSpecSchema.safeParse(body);
        if (!parsed.success)
          throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'spec'}: ${i.message}`).join('; '));
        spec = parsed.data as FaultSpec;
      } else throw new Error('body must be a FaultSpec object or {"spec": "<fault syntax>"}');
    } catch (e) {
      return reply.code(400).send(badRequest([invalid('spec', (e as Error).message)]));
    }
    handle.setFaults(spec);
    return { ok: true, faults: spec };
  });
}
