// The ingest key that `start` made for its sample tenant, kept in control/sample-ingest-key.json
// (mode 0600: it holds the key itself) so that every start shows the same key again and SDKs that
// were given it keep posting across restarts. A key revoked since, or of another customer, is
// replaced by a new one.
import path from 'node:path';
import { z } from 'zod';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { CUSTOMER_ID_PATTERN } from '../warehouse/ids.ts';
import { readDocument, updateDocument } from './documents.ts';
import { addIngestKey, INGEST_KEY_ID_PATTERN, INGEST_KEY_PATTERN, listIngestKeys } from './ingest-keys.ts';

const SampleKeyDocSchema = z.object({
  version: z.literal(1),
  sample: z.object({ keyId: z.string().regex(INGEST_KEY_ID_PATTERN), key: z.string().regex(INGEST_KEY_PATTERN), customerId: z.string().regex(CUSTOMER_ID_PATTERN) }).nullable(),
});
type SampleKeyDoc = z.infer<typeof SampleKeyDocSchema>;
const EMPTY: SampleKeyDoc = { version: 1, sample: null };

export function sampleKeyFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'sample-ingest-key.json');
}

/** The sample key of `customer`: the one kept when it is still valid, else a new one (kept). `made`: new. */
export async function sampleIngestKey(layout: WarehouseLayout, customer: string, label: string): Promise<{ key: string; made: boolean }> {
  const kept = (await readDocument(sampleKeyFile(layout), SampleKeyDocSchema, EMPTY)).sample;
  if (kept && (await stillValid(layout, kept.keyId, customer))) return { key: kept.key, made: false };
  type Made = { next: SampleKeyDoc; result: { key: string; made: boolean } };
  return updateDocument(sampleKeyFile(layout), SampleKeyDocSchema, EMPTY, async (doc): Promise<Made> => {
    // Another start may have made one meanwhile (under this document's lock now).
    if (doc.sample && (await stillValid(layout, doc.sample.keyId, customer))) return { next: doc, result: { key: doc.sample.key, made: false } };
    const { key, record } = await addIngestKey(layout, { customer, label });
    return { next: { version: 1, sample: { keyId: record.id, key, customerId: record.customerId } }, result: { key, made: true } };
  });
}

async function stillValid(layout: WarehouseLayout, keyId: string, customer: string): Promise<boolean> {
  const record = (await listIngestKeys(layout)).find((k) => k.id === keyId);
  return record !== undefined && record.revokedAt === null && record.customerId === customer;
}
