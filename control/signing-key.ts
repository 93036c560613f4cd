// The manifest signing key (ECDSA P-256, ES256): from MANIFEST_SIGNING_KEY (PEM or JWK) when set,
// else control/manifest-signing-key.pem, generated on first start with mode 0600 by whichever
// process gets there first. Only its public half ever leaves this module as data.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { createOnce } from './secrets.ts';
import { InternalError } from '../lib/errors.ts';

/** The public verification key exactly as GET /manifest/public-key returns it. */
export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  use: 'sig';
  alg: 'ES256';
}

export interface SigningKey {
  privateKey: KeyObject;
  publicJwk: PublicJwk;
}

export class SigningKeyError extends InternalError {
  override name = 'SigningKeyError';
  override readonly errorCode = 'signing_key_invalid';
}

const KEY_FILE = 'manifest-signing-key.pem';

function fromText(text: string, origin: string): KeyObject {
  let key: KeyObject;
  try {
    key = text.trim().startsWith('{')
      ? createPrivateKey({ key: JSON.parse(text) as import('node:crypto').JsonWebKey, format: 'jwk' })
      : createPrivateKey(text);
  } catch {
    // The key's own text never goes into a message.
    throw new SigningKeyError(`${origin} is not a private key in PEM or JWK form`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new SigningKeyError(`${origin} must be an EC key on P-256 (ES256)`);
  }
  return key;
}

export function publicJwkOf(privateKey: KeyObject): PublicJwk {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return { kty: 'EC', crv: 'P-256', x: String(jwk.x), y: String(jwk.y), use: 'sig', alg: 'ES256' };
}

export async function loadSigningKey(layout: WarehouseLayout, fromEnv: string | null): Promise<SigningKey> {
  let privateKey: KeyObject;
  if (fromEnv) {
    privateKey = fromText(fromEnv, 'MANIFEST_SIGNING_KEY');
  } else {
    const text = await createOnce(
      layout,
      KEY_FILE,
      () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
      (t) => t.includes('END PRIVATE KEY'),
    );
    privateKey = fromText(text, `control/${KEY_FILE}`);
  }
  return { privateKey, publicJwk: publicJwkOf(privateKey) };
}
