// The live update of open pages, rendered once: after a snapshot swap every open page fetches its
// <main> again at once (portal/events.ts). Requests of one session for the same URL at the same
// snapshot wait for one render (its reads of the API and its HTML) instead of making one each: 50
// tabs of one session following the live hour cost one render per page kind, not 50. Sharing is by
// session (a fragment carries the session's CSRF value) and only while the render runs.
import type { PortalSession } from './sessions.ts';
import { SharedWork } from './shared-work.ts';

export class FragmentRenders {
  private readonly work = new SharedWork();
  private readonly sessionKeys = new WeakMap<PortalSession, number>();
  private nextKey = 0;
  /** Renders started (a request that joined one running is not counted). */
  started = 0;

  /** The HTML of `url`'s fragment for `session` at `snapshotId`: the running render's, or a new one. */
  html(session: PortalSession, snapshotId: string | null, url: string, signal: AbortSignal, render: (signal: AbortSignal) => Promise<string>): Promise<string> {
    if (snapshotId === null) return render(signal);
    let sessionKey = this.sessionKeys.get(session);
    if (sessionKey === undefined) this.sessionKeys.set(session, (sessionKey = this.nextKey++));
    return this.work.run(`${sessionKey}|${snapshotId}|${url}`, signal, (shared) => {
      this.started++;
      return render(shared);
    });
  }

  /** Requests that waited for a render already running. */
  get joined(): number {
    return this.work.joined;
  }
}
