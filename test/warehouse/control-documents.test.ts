// Control documents read on hot paths (readDocumentCached): parsed once, and every change to the
// file, by atomic replacement or edited in place at the same size, seen on the next read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { tempDir } from '../helpers/warehouse.ts';
import { warehouseLayout, type WarehouseLayout } from '../../warehouse/layout.ts';
import { addTenant, findTenant, listTenants, tenantsFile } from '../../control/tenants.ts';

let dir: string;
let layout: WarehouseLayout;
beforeAll(async () => {
  dir = await tempDir();
  layout = warehouseLayout(dir);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('cached reads of the tenants document', () => {
  it('reads nothing when there is no document, then sees the first tenant written', async () => {
    expect(await listTenants(layout)).toEqual([]);
    await addTenant(layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: 0.035, savingsSharePct: 20 });
    expect((await findTenant(layout, 'acme'))?.cdnPricePerGb).toBe(0.035);
  });

  it('returns the same parsed objects while the file is unchanged', async () => {
    const a = await listTenants(layout);
    const b = await listTenants(layout);
    expect(b).toBe(a);
  });

  it('sees an atomic replacement (a new tenant) at once', async () => {
    const before = await listTenants(layout);
    await addTenant(layout, { customerId: 'globex', name: 'Globex', cdnPricePerGb: null, savingsSharePct: 25 });
    const after = await listTenants(layout);
    expect(after).not.toBe(before);
    expect(after.map((t) => t.customerId)).toEqual(['acme', 'globex']);
  });

  it('sees an edit in place that keeps the size of the file', async () => {
    await listTenants(layout);
    const file = tenantsFile(layout);
    const text = await fs.readFile(file, 'utf8');
    const edited = text.replace('0.035', '0.045');
    expect(edited.length).toBe(text.length);
    await fs.writeFile(file, edited);
    expect((await findTenant(layout, 'acme'))?.cdnPricePerGb).toBe(0.045);
  });

  it('sees the document removed', async () => {
    await fs.rm(tenantsFile(layout));
    expect(await listTenants(layout)).toEqual([]);
  });
});
