/**
 * Remembers, per key id, the last secret that passed the HMAC check against that key row's salt and hash,
 * so a client sending the same key again is checked by a constant-time comparison instead of a WebCrypto
 * import and verify. Those are asynchronous jobs run on a worker thread: per request they cost more than
 * the rest of authentication together (bench/profile.mjs; docs/performance.md), and on a gateway pinned to
 * one core every hand-off to the worker is a context switch.
 *
 * What does not change: the key row is still read from the database on every request (revocation stays
 * immediate everywhere), and an entry only ever matches the salt and hash it was verified against, so a
 * rotated or re-issued key is verified again. The price: the process keeps up to `capacity` secrets that
 * clients are sending it anyway in memory, as any server holding a session does.
 */
import { verifySecret } from './key-hash.js';

interface Verified {
  secret: string;
  salt: string;
  hash: string;
}

/** Compares two strings in time that depends on their length only (both are keys of one fixed length). */
function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export class VerifiedSecrets {
  private readonly entries = new Map<string, Verified>();

  constructor(private readonly capacity = 10_000) {}

  /** True when `secret` is the secret of the key row (id, salt, hash). */
  async verify(keyId: string, secret: string, salt: string, hash: string): Promise<boolean> {
    const known = this.entries.get(keyId);
    if (known !== undefined && known.salt === salt && known.hash === hash && sameString(known.secret, secret)) return true;
    if (!(await verifySecret(secret, salt, hash))) return false;
    // Re-inserted so the Map's insertion order is least-recently verified first; the oldest goes when full.
    this.entries.delete(keyId);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyId, { secret, salt, hash });
    return true;
  }

  get size(): number {
    return this.entries.size;
  }
}
