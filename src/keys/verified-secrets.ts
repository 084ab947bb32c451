/**
 * Remembers, per key id, the last secret that passed the HMAC check against that key row's salt and hash,
 * so a client sending the same key again is checked by a constant-time comparison instead of a WebCrypto
 * import and verify. Those are asynchronous jobs run on a worker thread: per request they cost more than
 * the rest of authentication together (bench/profile.mjs; docs/performance.md), and on a gateway pinned to
 * one core every hand-off to the worker is a context switch.
 *
 * What does not change: the key row is still read from the database on every request (revocation stays
 * immediate everywhere), and an entry only ever matches the salt and hash it was verified against, so a
 * rotated or re-issued key is verified again.
 *
 * No secret is kept: an entry holds an HMAC-SHA256 of the secret under a random key drawn when the process
 * starts (synchronous, pure JS: about 3 us, against a WebCrypto round trip), so a heap dump or a core file
 * holds digests that authenticate nothing anywhere. The HMAC's keyed state (the key's two padded blocks
 * hashed) is computed once and cloned per digest: 3.0 us against 4.8 for a fresh HMAC, in a loop.
 */
import { hmac, type HMAC } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha256';
import { verifySecret } from './key-hash.js';

interface Verified {
  digest: Uint8Array;
  salt: string;
  hash: string;
}

const encoder = new TextEncoder();

/** Compares two digests in time that depends on their length only. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

export class VerifiedSecrets {
  private readonly entries = new Map<string, Verified>();
  /**
   * Lives only in this process's memory; a restart forgets every entry anyway. Drawn at first use, not at
   * construction: the Workers runtime refuses random values in a module's global scope, where this is built.
   */
  private keyed: HMAC<ReturnType<typeof sha256.create>> | null = null;

  constructor(private readonly capacity = 10_000) {}

  private digest(secret: string): Uint8Array {
    this.keyed ??= hmac.create(sha256, crypto.getRandomValues(new Uint8Array(32)));
    return this.keyed.clone().update(encoder.encode(secret)).digest();
  }

  /** True when `secret` is the secret of the key row (id, salt, hash). */
  async verify(keyId: string, secret: string, salt: string, hash: string): Promise<boolean> {
    const known = this.entries.get(keyId);
    if (known !== undefined && known.salt === salt && known.hash === hash && sameBytes(known.digest, this.digest(secret))) return true;
    if (!(await verifySecret(secret, salt, hash))) return false;
    // Re-inserted so the Map's insertion order is least-recently verified first; the oldest goes when full.
    this.entries.delete(keyId);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyId, { digest: this.digest(secret), salt, hash });
    return true;
  }

  get size(): number {
    return this.entries.size;
  }
}
