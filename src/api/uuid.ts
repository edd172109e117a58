import { hash as digest } from 'node:crypto';

/** The namespace of every product-sync UUIDv5 (reference seed ids, unit ids, deterministic item ids). */
export const PRODUCT_SYNC_NAMESPACE = '6f1c2b1e-9d0a-4c5e-8b7a-2f3d4e5a6b7c';

const namespaceBytes = new Map<string, Buffer>();

/** RFC 4122 §4.3 name-based UUID (SHA-1, version 5). Same name and namespace → same id, across runs and machines. */
export function uuidv5(name: string, namespace: string = PRODUCT_SYNC_NAMESPACE): string {
  let ns = namespaceBytes.get(namespace);
  if (!ns) {
    ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
    if (namespaceBytes.size < 100) namespaceBytes.set(namespace, ns);
  }
  // One-shot hash (a create's id is computed for every row): cheaper than a Hash object.
  const hash = digest('sha1', Buffer.concat([ns, Buffer.from(name, 'utf8')]), 'buffer');
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.toString('hex', 0, 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Deterministic trade item id for a create (docs/sync.md, "Creates are never sent twice"): UUIDv5(owner, GTIN-14). */
export function tradeItemIdFor(ownerCompanyId: string, gtin: string): string {
  return uuidv5(`trade-item:${ownerCompanyId.toLowerCase()}:${gtin}`);
}

/** Deterministic manufactured item id: UUIDv5 of owner + GTIN-14 + supplier. */
export function manufacturedItemIdFor(ownerCompanyId: string, gtin: string, supplierCompanyId: string): string {
  return uuidv5(`manufactured-item:${ownerCompanyId.toLowerCase()}:${gtin}:${supplierCompanyId.toLowerCase()}`);
}
