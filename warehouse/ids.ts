// Customer and stream ids as docs/sdk-ingest.md defines them, and the ownership rule built on them.

/** 1–64 characters of [a-z0-9_-]. */
export const CUSTOMER_ID_PATTERN = /^[a-z0-9_-]{1,64}$/;
/** 1–128 characters of [A-Za-z0-9._~-]. */
export const STREAM_NAME_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;
/** The same rules as SQL regular expressions (RE2), for checks that run inside DuckDB. */
export const STREAM_ID_REGEX_SQL = '^[a-z0-9_-]{1,64}:[A-Za-z0-9._~-]{1,128}$';

export interface StreamId {
  customerId: string;
  name: string;
}

/** Split `<customerId>:<name>`; null when either part breaks its rule. */
export function parseStreamId(id: string): StreamId | null {
  const colon = id.indexOf(':');
  if (colon < 0) return null;
  const customerId = id.slice(0, colon);
  const name = id.slice(colon + 1);
  if (!CUSTOMER_ID_PATTERN.test(customerId) || !STREAM_NAME_PATTERN.test(name)) return null;
  return { customerId, name };
}

/** A stream belongs to a customer when the part before the first colon equals its id. */
export function streamBelongsTo(streamId: string, customerId: string): boolean {
  return streamId.startsWith(`${customerId}:`);
}
