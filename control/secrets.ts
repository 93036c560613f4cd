// Secrets of the control area (mode 0600): generated on first use by whichever process needs one
// first, with an exclusive create so that two processes starting together agree on one value.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { fsyncDir } from '../lib/fsx.ts';

/**
 * The text of control file `name` (mode 0600), created with `make()` if it does not exist: an
 * exclusive create, so that of several processes starting together one writes it and all read
 * that one. `complete` tells when a value another process is still writing is whole.
 */
export async function createOnce(layout: WarehouseLayout, name: string, make: () => string, complete: (text: string) => boolean): Promise<string> {
  const file = path.join(layout.control, name);
  await fs.mkdir(layout.control, { recursive: true, mode: 0o700 });
  try {
    const handle = await fs.open(file, 'wx', 0o600);
    try {
      await handle.writeFile(make());
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsyncDir(layout.control);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (let attempt = 0; ; attempt++) {
    const text = await fs.readFile(file, 'utf8');
    if (complete(text)) return text;
    if (attempt > 50) throw new Error(`control/${name} is incomplete`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The bytes of secret `name`, created (random, `bytes` long) if it does not exist. */
export async function loadOrCreateSecret(layout: WarehouseLayout, name: string, bytes = 32): Promise<Buffer> {
  const text = await createOnce(layout, name, () => randomBytes(bytes).toString('base64url'), (t) => t.trim().length > 0);
  return Buffer.from(text.trim(), 'base64url');
}

/** A secret given by the environment: base64url (or base64) text of at least 32 bytes. */
export function secretFromEnv(value: string, what: string): Buffer {
  const buf = Buffer.from(value, 'base64url');
  if (buf.length < 32) throw new Error(`${what} must be at least 32 bytes, base64url-encoded (got ${buf.length})`);
  return buf;
}
