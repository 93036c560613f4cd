// Standard Webhooks signatures (standardwebhooks.com): a secret `whsec_<base64 key>`, and
// `v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`, one per valid secret, space-separated.
import { createHmac, randomBytes } from 'node:crypto';

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: a signature by each secret. */
export function signatures(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' ');
}
