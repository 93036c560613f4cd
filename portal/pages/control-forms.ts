// What the alerts and webhooks pages share: whose control documents a page acts on (a tenant its
// own; an operator the tenant chosen with `?customer=`, passed to the API as `customerId`), and
// the API's problem bodies their forms show.

import type { Viewer } from './common.ts';

/** The problem+json of a refused form (field-level reasons where the API gives them). */
export interface Problem {
  code?: string;
  detail?: string;
  errors?: { field?: string; reason: string }[];
}

export interface ControlTarget {
  /** The customer an operator acts for (null: a tenant's own session). */
  customerId: string | null;
  /** The page's own query naming that customer ('' for a tenant). */
  customerQs: string;
}

/** Whose rules and endpoints: a tenant's own, an operator's chosen tenant, or none (an operator without one). */
export function controlTarget(viewer: Viewer): ControlTarget | null {
  if (viewer.role === 'tenant') return { customerId: null, customerQs: '' };
  if (!viewer.customerId) return null;
  return { customerId: viewer.customerId, customerQs: `?customer=${encodeURIComponent(viewer.customerId)}` };
}

/** An API path with the operator's `customerId` added to its query. */
export function apiPath(path: string, target: ControlTarget): string {
  if (target.customerId === null) return path;
  return `${path}${path.includes('?') ? '&' : '?'}customerId=${encodeURIComponent(target.customerId)}`;
}
