// An open page follows new snapshots: the event stream says a snapshot changed, and the page fetches
// its own <main> again (one request) and swaps it in, keeping focus and the elements marked
// data-keep. The page says how old its figures are, and plainly when they stop moving.
import { drawCharts } from './charts.ts';

/** Figures older than this on a live page are called stale. */
const STALE_AFTER_MS = 90_000;

let streamBroken = false;

function mainOf(doc: Document): HTMLElement | null {
  return doc.getElementById('main');
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/** Updates the age line and the stale warning, once a second. */
function tickAge(): void {
  const main = mainOf(document);
  const asOf = Date.parse(main?.dataset['asOf'] ?? '');
  if (!main || !Number.isFinite(asOf)) return;
  const age = Date.now() - asOf;
  const label = main.querySelector<HTMLElement>('[data-age]');
  if (label) label.textContent = `(${ago(age)})`;
  const stale = main.querySelector<HTMLElement>('[data-stale]');
  if (!stale) return;
  const message = streamBroken
    ? 'Live updates are interrupted: the figures below are not moving. Retrying…'
    : age > STALE_AFTER_MS
      ? `These figures have not moved for ${ago(age).replace(' ago', '')}: no new snapshot was published. New reports may not be arriving, or the rollups have stopped.`
      : '';
  stale.hidden = message === '';
  if (stale.textContent !== message) stale.textContent = message;
}

async function refresh(): Promise<void> {
  const res = await fetch(location.href, { headers: { 'X-Portal-Fragment': 'main' }, credentials: 'same-origin' });
  if (res.status === 401) return void location.assign('/portal/login?ended=revoked');
  if (!res.ok) return;
  const next = mainOf(new DOMParser().parseFromString(await res.text(), 'text/html'));
  const main = mainOf(document);
  if (!next || !main) return;
  for (const kept of main.querySelectorAll<HTMLElement>('[data-keep][id]')) next.querySelector(`#${CSS.escape(kept.id)}`)?.replaceWith(kept);
  const focused = document.activeElement instanceof HTMLElement && main.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
  main.replaceWith(document.adoptNode(next));
  if (focused) next.querySelector<HTMLElement>(`[href="${CSS.escape(focused)}"]`)?.focus();
  drawCharts(next);
  tickAge();
}

export function followSnapshots(): void {
  const main = mainOf(document);
  if (!main) return;
  setInterval(tickAge, 1000);
  tickAge();
  if (main.dataset['live'] !== '1') return;
  const events = new EventSource('/portal/events');
  let pending: Promise<void> | null = null;
  let again = false;
  const update = () => {
    if (pending) return void (again = true);
    pending = refresh().finally(() => {
      pending = null;
      if (again) {
        again = false;
        update();
      }
    });
  };
  events.addEventListener('snapshot', (e) => {
    streamBroken = false;
    const { asOf } = JSON.parse((e as MessageEvent<string>).data) as { asOf: string };
    if (asOf !== mainOf(document)?.dataset['asOf']) update();
  });
  events.addEventListener('signed-out', () => location.assign('/portal/login?ended=revoked'));
  events.addEventListener('open', () => (streamBroken = false));
  events.addEventListener('error', () => {
    streamBroken = true;
    tickAge();
  });
}
