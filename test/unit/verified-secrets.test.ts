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
});
