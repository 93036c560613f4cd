// What the portal's routes share: its sessions, the loopback client of the API, the assets, and
// the parts of the API process it leans on (token verification, revocation, the served snapshot).
import type { Logger } from '../lib/log.ts';
import type { Revocation } from '../control/revocation.ts';
import type { SnapshotStore } from '../served/snapshot-store.ts';
import type { AppConfig } from '../lib/config.ts';
import type { PortalApi } from './api-client.ts';
import type { PortalSessions } from './sessions.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import type { Admission } from '../served/admission.ts';

export interface PortalDeps {
  api: PortalApi;
  sessions: PortalSessions;
  throttle: SignInThrottle;
  /** Open live pages (event streams), per tenant and in all. */
  livePages: Admission;
  secret: Uint8Array;
  revocation: Pick<Revocation, 'refusal' | 'refusalLookingAgain'>;
  store: Pick<SnapshotStore, 'current' | 'onSwap'>;
  config: AppConfig['portal'];
  log: Logger;
}
