/**
 * Salted hashing of key secrets: HMAC-SHA256 keyed by a per-key random salt. A fast hash is the right
 * tool here (unlike passwords): the secret has 131 random bits, so no dictionary or brute force applies,
 * and verification sits on every request. crypto.subtle.verify compares in constant time.
 */
import { fromBase64url, toBase64url } from './encoding.js';

const encoder = new TextEncoder();
const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;

async function importSalt(salt: Uint8Array<ArrayBuffer>, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', salt, HMAC, false, [usage]);
}

export async function hashSecret(secret: string): Promise<{ salt: string; hash: string }> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const mac = await crypto.subtle.sign('HMAC', await importSalt(salt, 'sign'), encoder.encode(secret));
  return { salt: toBase64url(salt), hash: toBase64url(new Uint8Array(mac)) };
}

export async function verifySecret(secret: string, salt: string, hash: string): Promise<boolean> {
  const key = await importSalt(fromBase64url(salt), 'verify');
  return crypto.subtle.verify('HMAC', key, fromBase64url(hash), encoder.encode(secret));
}
