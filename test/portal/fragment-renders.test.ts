// The live updates of open pages share their render: after a swap, the concurrent fragment requests
// of one session for one URL at one snapshot wait for one render; another session, URL or snapshot
// renders its own; a page gone does not cancel the render the others wait for; nothing is kept
// once a render is done.
import { describe, expect, it } from 'vitest';
import { FragmentRenders } from '../../portal/fragment-renders.ts';
import type { PortalSession } from '../../portal/sessions.ts';

const session = (csrf: string): PortalSession => ({ token: `t-${csrf}`, caller: { role: 'tenant', customerId: 'acme', tenantId: 'acme', expiresAt: 0 } as unknown as PortalSession['caller'], csrf, expiresAtMs: 0 });
const live = () => new AbortController().signal;

/** A render that finishes when `release` is called, counting its starts. */
function heldRender() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let starts = 0;
  const render = async (signal: AbortSignal) => {
    starts++;
    await gate;
    if (signal.aborted) throw new Error('cancelled');
    return `<main>${starts}</main>`;
  };
  return { render, release, starts: () => starts };
}

describe('FragmentRenders', () => {
  it('renders once for the concurrent requests of one session, URL and snapshot', async () => {
    const f = new FragmentRenders();
    const a = session('a');
    const h = heldRender();
    const pages = Array.from({ length: 50 }, () => f.html(a, 'snap-2', '/portal/?window=live', live(), h.render));
    h.release();
    const html = await Promise.all(pages);
    expect(new Set(html)).toEqual(new Set(['<main>1</main>']));
    expect(h.starts()).toBe(1);
    expect([f.started, f.joined]).toEqual([1, 49]);
    // Done: the next request renders again (nothing is kept after the render).
    await f.html(a, 'snap-2', '/portal/?window=live', live(), h.render);
    expect(h.starts()).toBe(2);
  });

  it('renders apart for another session, another URL or another snapshot', async () => {
    const f = new FragmentRenders();
    const h = heldRender();
    const a = session('a');
    const pages = [
      f.html(a, 'snap-2', '/portal/?window=live', live(), h.render),
      f.html(session('b'), 'snap-2', '/portal/?window=live', live(), h.render),
      f.html(a, 'snap-2', '/portal/streams/acme%3As1?window=live', live(), h.render),
      f.html(a, 'snap-3', '/portal/?window=live', live(), h.render),
      f.html(a, null, '/portal/?window=live', live(), h.render),
    ];
    h.release();
    await Promise.all(pages);
    expect(h.starts()).toBe(5);
  });

  it('keeps rendering for the pages still waiting when one goes, and stops when all have gone', async () => {
    const f = new FragmentRenders();
    const a = session('a');
    const h = heldRender();
    const gone = new AbortController();
    const first = f.html(a, 'snap-2', '/portal/', gone.signal, h.render);
    const second = f.html(a, 'snap-2', '/portal/', live(), h.render);
    gone.abort();
    await expect(first).rejects.toBeDefined();
    h.release();
    expect(await second).toBe('<main>1</main>');

    const g = heldRender();
    const only = new AbortController();
    const alone = f.html(a, 'snap-3', '/portal/', only.signal, g.render);
    only.abort();
    await expect(alone).rejects.toBeDefined();
    g.release();
    // Its render saw its signal aborted; a new request starts a new render rather than joining it.
    const again = f.html(a, 'snap-3', '/portal/', live(), g.render);
    expect(await again).toBe('<main>2</main>');
  });
});
