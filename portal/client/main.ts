// The portal's one script: the sign-in link's code read from the URL's fragment and posted, the
// charts, and the live updates of an open page. Everything else is plain links and forms.
import { drawCharts } from './charts.ts';
import { followSnapshots } from './live.ts';

/** A printed sign-in link carries its one-time code after '#': posted at once, then cleared from the URL. */
function signInFromLink(): boolean {
  const form = document.querySelector<HTMLFormElement>('form[data-sign-in]');
  const code = new URLSearchParams(location.hash.slice(1)).get('code');
  if (!form || !code) return false;
  history.replaceState(null, '', location.pathname);
  form.querySelector<HTMLInputElement>('[data-link-code]')!.value = code;
  form.querySelector<HTMLInputElement>('#token')?.removeAttribute('required');
  form.submit();
  return true;
}

function start(): void {
  // A link opened from the sign-in page itself changes only the fragment: no new page load.
  window.addEventListener('hashchange', () => void signInFromLink());
  if (signInFromLink()) return; // leaving for the session's first page
  drawCharts(document);
  followSnapshots();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
