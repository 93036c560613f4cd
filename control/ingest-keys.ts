// Ingest keys: public, write-only keys that players embed to post session reports to a collector
// (docs/sdk-ingest.md). Kept in control/ingest-keys.json (mode 0600) as SHA-256 hashes only: the
// key itself is printed once, when it is made. Every collector reads the file through the
// stat-checked cache at most once per REVOCATION_POLL_SECONDS (IngestKeyChecker), so a revocation
// is seen within that time.
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { ulid } from 'ulid';
import { z } from 'zod';
import { CUSTOMER_ID_PATTERN } from '../warehouse/ids.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from './documents.ts';
import { findTenant, TENANT_ID_PATTERN, type Tenant } from './tenants.ts';
import type { Revocation } from './revocation.ts';
import type { Logger } from '../lib/log.ts';
import { createOnce } from './secrets.ts';
import { InternalError } from '../lib/errors.ts';

/** `ingest_` and 32 characters of base64url (24 random bytes). */
export const INGEST_KEY_PATTERN = /^ingest_[A-Za-z0-9_-]{32}$/;
export const INGEST_KEY_ID_PATTERN = /^ikey_[0-9A-HJKMNP-TV-Z]{26}$/;

const IngestKeySchema = z.object({
  id: z.string().regex(INGEST_KEY_ID_PATTERN),
  /** SHA-256 of the key, hex. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The key's last four characters, so that an operator can tell keys apart in `list`. */
  hint: z.string().max(8),
  customerId: z.string().regex(CUSTOMER_ID_PATTERN),
  /** The tenant the key was made for: a tenant removed and made again does not revive old keys. */
  tenantId: z.string().regex(TENANT_ID_PATTERN),
  label: z.string().max(200).nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export type IngestKey = z.infer<typeof IngestKeySchema>;

const IngestKeysDocSchema = z
  .object({ version: z.literal(1), keys: z.array(IngestKeySchema) })
  .refine((d) => new Set(d.keys.map((k) => k.hash)).size === d.keys.length, 'two keys share a hash');
type IngestKeysDoc = z.infer<typeof IngestKeysDocSchema>;
const EMPTY: IngestKeysDoc = { version: 1, keys: [] };

export class IngestKeyError extends InternalError {
  override name = 'IngestKeyError';
  override readonly errorCode = 'ingest_key_refused';
}

export function ingestKeysFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'ingest-keys.json');
}

export function hashIngestKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Create the document empty with mode 0600 if it does not exist yet: the atomic replace keeps the
 * mode of the file it replaces, so every later version stays 0600.
 */
async function ensureFile(layout: WarehouseLayout): Promise<void> {
  await createOnce(layout, path.basename(ingestKeysFile(layout)), () => `${JSON.stringify(EMPTY, null, 2)}\n`, (t) => t.endsWith('\n'));
}

/** Make a key for a tenant's customer; the returned `key` is the only time it is ever shown. */
export async function addIngestKey(
  layout: WarehouseLayout,
  input: { customer: string; label?: string | null },
): Promise<{ key: string; record: IngestKey; tenant: Tenant }> {
  const tenant = await findTenant(layout, input.customer);
  if (!tenant) throw new IngestKeyError(`no tenant has the id or customer id ${input.customer}: add it first with \`tenants add\``);
  const key = `ingest_${randomBytes(24).toString('base64url')}`;
  const record: IngestKey = {
    id: `ikey_${ulid()}`,
    hash: hashIngestKey(key),
    hint: key.slice(-4),
    customerId: tenant.customerId,
    tenantId: tenant.id,
    label: input.label ?? null,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await ensureFile(layout);
  await updateDocument(ingestKeysFile(layout), IngestKeysDocSchema, EMPTY, (doc) => ({ next: { ...doc, keys: [...doc.keys, record] }, result: null }));
  return { key, record, tenant };
}

/** Every key ever made, revoked ones included, in creation order (shared: do not modify). */
export async function listIngestKeys(layout: WarehouseLayout): Promise<readonly IngestKey[]> {
  return (await readDocumentCached(ingestKeysFile(layout), IngestKeysDocSchema, EMPTY)).keys;
}

/** Revoke a key, named by the key itself or by its id; revoking twice is not an error. */
export async function revokeIngestKey(layout: WarehouseLayout, keyOrId: string): Promise<IngestKey> {
  const match = (k: IngestKey) => (INGEST_KEY_ID_PATTERN.test(keyOrId) ? k.id === keyOrId : k.hash === hashIngestKey(keyOrId));
  await ensureFile(layout);
  return updateDocument(ingestKeysFile(layout), IngestKeysDocSchema, EMPTY, (doc) => {
    const found = doc.keys.find(match);
    if (!found) throw new IngestKeyError('no ingest key matches (give the key itself or its id, ikey_…)');
    if (found.revokedAt !== null) return { next: doc, result: found };
    const revoked = { ...found, revokedAt: new Date().toISOString() };
    return { next: { ...doc, keys: doc.keys.map((k) => (k === found ? revoked : k)) }, result: revoked };
  });
}

export type KeyCheck =
  | { ok: true; key: IngestKey; customerId: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'unknown' | 'revoked' | 'no_tenant' };

/** Keys by hash, built once per version of the document. */
const indexes = new WeakMap<object, Map<string, IngestKey>>();

function indexOf(keys: readonly IngestKey[]): Map<string, IngestKey> {
  let index = indexes.get(keys);
  if (!index) {
    index = new Map(keys.map((k) => [k.hash, k]));
    indexes.set(keys, index);
  }
  return index;
}

/** The syntax of a presented key: null when it may be looked up. */
function malformedKey(key: string | null): KeyCheck | null {
  if (key === null || key === '') return { ok: false, reason: 'missing' };
  if (!INGEST_KEY_PATTERN.test(key)) return { ok: false, reason: 'malformed' };
  return null;
}

/**
 * What a well-formed key may do, against the keys and the processes' one revocation rule
 * (credentialRefusal: a key of a customer with no tenant, or of a tenant removed and made again,
 * is refused).
 */
function decideKey(key: string, keys: readonly IngestKey[], tenants: Pick<Revocation, 'refusal'>): KeyCheck {
  const found = indexOf(keys).get(hashIngestKey(key));
  if (!found) return { ok: false, reason: 'unknown' };
  if (found.revokedAt !== null) return { ok: false, reason: 'revoked' };
  if (tenants.refusal({ customerId: found.customerId, tenantId: found.tenantId }) !== null) return { ok: false, reason: 'no_tenant' };
  return { ok: true, key: found, customerId: found.customerId };
}

/** Least time between two looks at the documents caused by unknown keys. */
const UNKNOWN_KEY_LOOK_MS = 100;

/**
 * What a presented key may do: write the reports of its customer, if it is well formed, known,
 * not revoked, and its customer still has a tenant (a removed tenant's keys stop).
 * For a collector: the keys are looked at (a stat of the document, a parse when it changed) at
 * most once per `maxAgeMs`, by the first request after that time, which the others arriving
 * meanwhile wait for; the tenants are the process's Revocation, refreshed on the same period. In
 * between, a check is a lookup in memory. A revocation or a removed tenant is seen within
 * `maxAgeMs` (REVOCATION_POLL_SECONDS), a new key (and its new tenant) at once (its first request
 * waits at most UNKNOWN_KEY_LOOK_MS for the next look of the keys, and for a look of the tenants
 * begun after it arrived: Revocation.lookAgain):
 * two stats per request were 14 % of the event loop's time at saturation.
 */
export class IngestKeyChecker {
  private lookedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;
  private keys: readonly IngestKey[] = [];
  private loaded = false;

  constructor(
    private readonly layout: WarehouseLayout,
    private readonly maxAgeMs: number,
    private readonly tenants: Pick<Revocation, 'refusal' | 'lookAgain'>,
    private readonly log: Logger | null = null,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The key sent (X-Ingest-Key or ?key=), trimmed; null or '' when none was. */
  async check(key: string | null): Promise<KeyCheck> {
    const bad = malformedKey(key);
    if (bad) return bad;
    if (this.now() - this.lookedAt >= this.maxAgeMs) await this.refresh();
    const verdict = decideKey(key!, this.keys, this.tenants);
    if (verdict.ok || (verdict.reason !== 'unknown' && verdict.reason !== 'no_tenant')) return verdict;
    // A key made since the last look works at once rather than after the poll time: an unknown key
    // waits for the next look, which unknown keys sent in a stream share (at most one look per
    // UNKNOWN_KEY_LOOK_MS). Refusing it until then would refuse a key printed a moment ago. So
    // does a known key whose tenant the process does not know: the keys and the tenants are read
    // at different moments, and a key read just after it was made may belong to a tenant made
    // just before it, which the tenants read before did not hold (its tenants are looked at again).
    const tenantsLook = this.tenants.lookAgain();
    if (verdict.reason === 'unknown') {
      const seen = this.lookedAt;
      const wait = seen + Math.min(this.maxAgeMs, UNKNOWN_KEY_LOOK_MS) - this.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (this.lookedAt === seen) await this.refresh();
      else if (this.refreshing) await this.refreshing;
    }
    await tenantsLook;
    return decideKey(key!, this.keys, this.tenants);
  }

  /**
   * Look at the keys and the tenants again, each in a look begun after this call: what this
   * process made just before (`start`'s sample tenant and key) is then known to every check.
   */
  async lookAgain(): Promise<void> {
    const tenants = this.tenants.lookAgain();
    if (this.refreshing) await this.refreshing.catch(() => {});
    await Promise.all([this.refresh(), tenants]);
  }

  /**
   * Look at the keys again (shared by the requests that arrive meanwhile). A document that cannot
   * be read keeps the last good keys (logged), as Revocation keeps its state; before any was read,
   * the error is the request's.
   */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const started = this.now();
      try {
        this.keys = await listIngestKeys(this.layout);
        this.loaded = true;
      } catch (err) {
        if (!this.loaded) throw err;
        this.log?.error({ err }, 'could not re-read the ingest keys; keeping the last good ones');
      }
      this.lookedAt = started;
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }
}
