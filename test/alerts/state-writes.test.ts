// The evaluation's state documents over a sequence of snapshots: a later snapshot that changes
// nothing durable leaves a tenant's document as it is (no write), a change writes it; a snapshot
// older than the newest one evaluated changes nothing (rules step in asOf order); two evaluations
// of one snapshot at once open one incident; a worse value of an open incident is written, a rule
// pending within its `for` is not. Snapshots after the first are the served one seen
// under a later asOf (test/helpers/later-snapshot.ts): same files, same figures.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { laterSnapshot } from '../helpers/later-snapshot.ts';
import { silentLogger } from '../../lib/log.ts';
import { evaluateSnapshot } from '../../alerts/evaluate.ts';
import { addRule, alertsDir, changeRule } from '../../alerts/rules-store.ts';
import { readState, updateState } from '../../alerts/state-store.ts';
import { findTenant, type Tenant } from '../../control/tenants.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import type { RuleFields } from '../../alerts/rule-schema.ts';

let t: TestApi;
let acme: Tenant;
let first: ServedSnapshot;

beforeAll(async () => {
  t = await startTestApi();
  acme = (await findTenant(t.api.deps.layout, 'acme'))!;
  first = t.api.deps.store.current()!;
}, 240_000);

afterAll(async () => {
  await t?.close();
});

const MIN = 60_000;
const at = (minutes: number) => (minutes === 0 ? first : laterSnapshot(first, minutes * MIN));
const evaluate = (snap: ServedSnapshot) => evaluateSnapshot({ db: t.api.deps.db, layout: t.api.deps.layout, log: silentLogger }, snap);
const stateFile = () => path.join(alertsDir(t.api.deps.layout), `${acme.id}.state.json`);
/** The file's identity and times: any write (an atomic replace) changes it. */
const stamp = async () => {
  const st = await fs.stat(stateFile(), { bigint: true });
  return `${st.ino}:${st.mtimeNs}:${st.ctimeNs}:${st.size}`;
};
// avgOffloadRatio is in [0, 1]: above -1 always holds, above 2 never.
const rule = (threshold: number): RuleFields => ({ name: `offload above ${threshold}`, metric: 'avgOffloadRatio', window: '24h', condition: 'above', threshold, minSessions: 1, for: '0s' });
const incidentsOf = async (ruleId: string) => (await readState(t.api.deps.layout, acme.id)).incidents.filter((i) => i.ruleId === ruleId);

describe('alert state documents over snapshots', () => {
  let firing: string;
  let quiet: string;

  it('writes a tenant’s document only when something durable changed', async () => {
    firing = (await addRule(t.api.deps.layout, acme.id, rule(-1), 100)).id;
    quiet = (await addRule(t.api.deps.layout, acme.id, rule(2), 100)).id;
    expect(await evaluate(at(0))).toMatchObject({ rules: 2, opened: 1, resolved: 0, firing: 1 });
    const written = await stamp();
    const run = (await readState(t.api.deps.layout, acme.id)).runs;
    expect(run[firing]).toMatchObject({ state: 'firing', asOf: first.manifest.asOf });
    expect(run[quiet]).toMatchObject({ state: 'ok', asOf: first.manifest.asOf });

    // Same values at later snapshots: the firing rule stays firing, nothing opens, nothing is written.
    expect(await evaluate(at(1))).toMatchObject({ opened: 0, resolved: 0, firing: 1 });
    expect(await evaluate(at(2))).toMatchObject({ opened: 0, resolved: 0, firing: 1 });
    expect(await stamp()).toBe(written);
    expect(await incidentsOf(firing)).toHaveLength(1);

    // A state transition is written: the quiet rule starts to breach (firing at once: for 0s).
    await changeRule(t.api.deps.layout, acme.id, quiet, (r) => ({ ...r, threshold: -1 }));
    expect(await evaluate(at(3))).toMatchObject({ opened: 1, resolved: 0, firing: 2 });
    expect(await stamp()).not.toBe(written);
    const opened = await incidentsOf(quiet);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ state: 'open', openedAt: at(3).manifest.asOf, openedSnapshot: at(3).id });
    expect((await readState(t.api.deps.layout, acme.id)).runs[firing]).toMatchObject({ state: 'firing', asOf: at(3).manifest.asOf });
  });

  it('changes nothing on a snapshot older than, or as old as, the newest one evaluated', async () => {
    // at(4) changes nothing (not written: the runs stay at 3), and is the newest evaluated.
    const before = await stamp();
    expect(await evaluate(at(4))).toMatchObject({ opened: 0, resolved: 0, firing: 2 });
    expect(await stamp()).toBe(before);
    // The firing rule recovers: a snapshot later than at(4) resolves it, an older one (even later
    // than the runs' own asOf) or at(4) again does not.
    await changeRule(t.api.deps.layout, acme.id, firing, (r) => ({ ...r, threshold: 2, recoveryThreshold: 2 }));
    expect(await evaluate(at(3.5))).toMatchObject({ opened: 0, resolved: 0, firing: 2 });
    expect(await evaluate(at(4))).toMatchObject({ opened: 0, resolved: 0, firing: 2 });
    expect(await stamp()).toBe(before);
    expect((await incidentsOf(firing))[0]).toMatchObject({ state: 'open' });
    expect(await evaluate(at(5))).toMatchObject({ opened: 0, resolved: 1, firing: 1 });
    expect((await incidentsOf(firing))[0]).toMatchObject({ state: 'resolved', resolvedAt: at(5).manifest.asOf });
  });

  it('opens one incident when two evaluations of one snapshot run at once', async () => {
    await changeRule(t.api.deps.layout, acme.id, firing, (r) => ({ ...r, threshold: -1, recoveryThreshold: -1 }));
    const both = await Promise.all([evaluate(at(6)), evaluate(at(6))]);
    expect(both.map((e) => e.opened).sort()).toEqual([0, 1]);
    const list = await incidentsOf(firing);
    expect(list.map((i) => i.state)).toEqual(['resolved', 'open']);
    expect(list[1]).toMatchObject({ openedAt: at(6).manifest.asOf });
    expect(list[1]!.id).not.toBe(list[0]!.id);
  });

  it('writes a worse value of an open incident, the rule staying firing', async () => {
    // The open incident's worst value made less bad than the snapshot's value (the figures do not
    // move between these snapshots): the next snapshot's value is worse, and is written.
    const [open] = (await incidentsOf(firing)).filter((i) => i.state === 'open');
    await updateState(t.api.deps.layout, acme.id, (doc) => ({
      next: { ...doc, incidents: doc.incidents.map((i) => (i.id === open!.id ? { ...i, worstValue: i.valueAtOpen - 1 } : i)) },
      result: null,
    }));
    const before = await stamp();
    expect(await evaluate(at(7))).toMatchObject({ opened: 0, resolved: 0, firing: 2 });
    expect(await stamp()).not.toBe(before);
    const after = (await incidentsOf(firing)).find((i) => i.id === open!.id)!;
    expect(after).toMatchObject({ state: 'open', worstValue: open!.valueAtOpen });
    // Then the same value again: nothing worse, nothing written.
    const written = await stamp();
    expect(await evaluate(at(8))).toMatchObject({ opened: 0, resolved: 0, firing: 2 });
    expect(await stamp()).toBe(written);
  });

  it('keeps a pending rule pending without writing, then opens its incident once `for` has passed', async () => {
    const waiting = (await addRule(t.api.deps.layout, acme.id, { ...rule(-1), name: 'pending for 10m', for: '10m' }, 100)).id;
    expect(await evaluate(at(9))).toMatchObject({ opened: 0, firing: 2 });
    expect((await readState(t.api.deps.layout, acme.id)).runs[waiting]).toMatchObject({ state: 'pending', pendingSince: at(9).manifest.asOf });
    const written = await stamp();
    expect(await evaluate(at(14))).toMatchObject({ opened: 0, firing: 2 });
    expect(await stamp()).toBe(written);
    expect(await evaluate(at(19))).toMatchObject({ opened: 1, firing: 3 });
    expect((await incidentsOf(waiting))[0]).toMatchObject({ state: 'open', openedAt: at(19).manifest.asOf });
  });
});
