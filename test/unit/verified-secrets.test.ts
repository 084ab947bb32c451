import { describe, expect, it } from 'vitest';
import { generateKey } from '../../src/keys/key-format.js';
import { hashSecret } from '../../src/keys/key-hash.js';
import { VerifiedSecrets } from '../../src/keys/verified-secrets.js';

describe('verified secrets', () => {
  it('accepts the right secret, first by HMAC then from memory, and refuses any other', async () => {
    const { secret, keyId } = generateKey('live');
    const { salt, hash } = await hashSecret(secret);
    const v = new VerifiedSecrets();
    expect(await v.verify(keyId, secret, salt, hash)).toBe(true);
    expect(v.size).toBe(1);
    expect(await v.verify(keyId, secret, salt, hash)).toBe(true);
    const other = generateKey('live').secret;
    expect(await v.verify(keyId, other, salt, hash)).toBe(false);
    // A wrong secret never replaces the remembered one.
    expect(await v.verify(keyId, secret, salt, hash)).toBe(true);
  });

  it('matches only the salt and hash it was verified against', async () => {
    const { secret, keyId } = generateKey('live');
    const first = await hashSecret(secret);
    const v = new VerifiedSecrets();
    expect(await v.verify(keyId, secret, first.salt, first.hash)).toBe(true);
    // The row now holds another secret's hash (a re-issued key): the remembered secret does not pass.
    const reissued = await hashSecret(generateKey('live').secret);
    expect(await v.verify(keyId, secret, reissued.salt, reissued.hash)).toBe(false);
    expect(await v.verify(keyId, secret, first.salt, reissued.hash)).toBe(false);
  });

  it('keeps at most its capacity, dropping the least recently verified', async () => {
    const v = new VerifiedSecrets(2);
    const keys = await Promise.all(
      [0, 1, 2].map(async () => {
        const k = generateKey('live');
        return { ...k, ...(await hashSecret(k.secret)) };
      }),
    );
    for (const k of keys) expect(await v.verify(k.keyId, k.secret, k.salt, k.hash)).toBe(true);
    expect(v.size).toBe(2);
    // The evicted one is verified again by HMAC, still correctly.
    const [a] = keys as [(typeof keys)[number]];
    expect(await v.verify(a.keyId, a.secret, a.salt, a.hash)).toBe(true);
    expect(v.size).toBe(2);
  });

  it('keeps no secret in memory, only digests under a per-process key', async () => {
    const { secret, keyId } = generateKey('live');
    const { salt, hash } = await hashSecret(secret);
    const v = new VerifiedSecrets();
    expect(await v.verify(keyId, secret, salt, hash)).toBe(true);
    // Everything the memo holds, as a heap dump would show it: the secret's text appears nowhere.
    const held = JSON.stringify([...(v as unknown as { entries: Map<string, object> }).entries.values()], (_k, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value,
    );
    expect(held).not.toContain(secret);
    expect(held).not.toContain(secret.slice(9));
    // Another process (another digest key) would not recognise the digest.
    const other = new VerifiedSecrets();
    expect((other as unknown as { digest(s: string): Uint8Array }).digest(secret)).not.toEqual(
      (v as unknown as { digest(s: string): Uint8Array }).digest(secret),
    );
  });
});
