// The portal as the API process holds it: its sessions, throttle and live-page admission made from
// the settings, its assets bundled, and the router the API mounts under /portal/; `signInLink`
// makes the one-time link that `start` prints.
import type { Router } from '@koa/router';
import { verifyToken } from '../api/tokens.ts';
import { Admission } from '../served/admission.ts';
import type { ApiDeps } from '../api/deps.ts';
import { PortalApi } from './api-client.ts';
import { portalAssets, type PortalAssets } from './assets.ts';
import { portalFrame, portalRouter } from './router.ts';
import type { Middleware } from 'koa';
import { PortalSessions } from './sessions.ts';
import { SignInThrottle } from './sign-in-throttle.ts';
import type { PortalDeps } from './deps.ts';

export interface Portal {
  router: Router;
  /** Headers and error pages of every request under /portal (mounted before the API's routers). */
  frame: Middleware;
  deps: PortalDeps;
  /** Told where the API listens, once it does: the portal reads the API there. */
  listening(url: string): void;
  /** A link that signs a browser in with this token, once, within PORTAL_SIGN_IN_LINK_SECONDS. */
  signInLink(token: string): Promise<string>;
}

export function createPortal(api: ApiDeps): Portal {
  const c = api.config.portal;
  const deps: PortalDeps = {
    api: new PortalApi(),
    sessions: new PortalSessions(c.sessionsMax, c.signInLinkMs),
    throttle: new SignInThrottle(c.signInFailuresPerMinute),
    livePages: new Admission(c.livePagesMax, c.livePagesPerTenant),
    secret: api.secret,
    revocation: api.revocation,
    store: api.store,
    config: c,
    log: api.log,
  };
  // Bundled in the background: the API's ports open without waiting for esbuild; a portal request
  // waits for it (portalFrame), the JSON routes never do.
  const assets = {} as PortalAssets;
  const ready = portalAssets().then((a) => void Object.assign(assets, a));
  ready.catch((err: unknown) => api.log.error({ err: (err as Error).message }, 'portal: bundling its assets failed; its pages answer 500'));
  const router = portalRouter(deps, assets);
  let base = '';
  return {
    router,
    frame: portalFrame(deps, assets, ready),
    deps,
    listening(url) {
      base = url;
      deps.api.listening(url);
    },
    async signInLink(token) {
      const code = deps.sessions.issueLink(token, await verifyToken(api.secret, token));
      // In the fragment: a browser never sends it, so it reaches no server or proxy log.
      return `${base}/portal/login#code=${code}`;
    },
  };
}
