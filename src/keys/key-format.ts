/**
 * API key format: `svc_<env>_<id:12><secret:22><checksum:6>`, all base62 after the prefix.
 * - id: the public key id (`key_<id>`), used to find the key row without scanning hashes.
 * - secret: 22 base62 characters = 131 bits of randomness.
 * - checksum: CRC32 of everything before it, as GitHub tokens carry, so secret scanners and the gateway
 *   can reject a mistyped or truncated key without a database read.
 */
import CRC32 from 'crc-32';
import { customAlphabet } from 'nanoid';
import type { Environment } from '../store/types.js';
import { BASE62, base62Fixed } from './encoding.js';

const ID_LEN = 12;
const SECRET_LEN = 22;
const CHECKSUM_LEN = 6;
const BODY_LEN = ID_LEN + SECRET_LEN + CHECKSUM_LEN;
const randomBase62 = customAlphabet(BASE62);

export const KEY_ID_PREFIX = 'key_';

export interface ParsedKey {
  environment: Environment;
  keyId: string;
  secret: string;
}

function checksum(text: string): string {
  return base62Fixed(CRC32.str(text), CHECKSUM_LEN);
}

export function generateKey(environment: Environment): { secret: string; keyId: string } {
  const idPart = randomBase62(ID_LEN);
  const head = `svc_${environment}_${idPart}${randomBase62(SECRET_LEN)}`;
  return { secret: head + checksum(head), keyId: KEY_ID_PREFIX + idPart };
}

/** Parses a presented secret; null when the shape or checksum is wrong (answered 401 without a DB read). */
export function parseKey(secret: string): ParsedKey | null {
  let environment: Environment;
  if (secret.startsWith('svc_live_')) environment = 'live';
  else if (secret.startsWith('svc_test_')) environment = 'test';
  else return null;
  const body = secret.slice(9);
  if (body.length !== BODY_LEN) return null;
  for (let i = 0; i < body.length; i++) if (!BASE62.includes(body[i] as string)) return null;
  const head = secret.slice(0, secret.length - CHECKSUM_LEN);
  if (checksum(head) !== secret.slice(secret.length - CHECKSUM_LEN)) return null;
  return { environment, keyId: KEY_ID_PREFIX + body.slice(0, ID_LEN), secret };
}

/** What listings show instead of the secret. */
export function redactKey(secret: string): string {
  return `${secret.slice(0, 13)}...${secret.slice(-4)}`;
}
