import { describe, expect, it } from 'vitest';
import { generateKey, parseKey, redactKey } from '../../src/keys/key-format.js';
import { hashSecret, verifySecret } from '../../src/keys/key-hash.js';

describe('key format', () => {
  it('round-trips and carries the environment and public id', () => {
    for (const env of ['live', 'test'] as const) {
      const { secret, keyId } = generateKey(env);
      expect(secret).toMatch(new RegExp(`^svc_${env}_[0-9A-Za-z]{40}$`));
      expect(parseKey(secret)).toEqual({ environment: env, keyId, secret });
      expect(keyId).toBe(`key_${secret.slice(9, 21)}`);
    }
  });

  it('rejects any single-character change through the checksum', () => {
    const { secret } = generateKey('live');
    for (let i = 9; i < secret.length; i++) {
      const c = secret[i] === 'A' ? 'B' : 'A';
      expect(parseKey(secret.slice(0, i) + c + secret.slice(i + 1))).toBeNull();
    }
  });

  it('rejects wrong prefixes, lengths and alphabets', () => {
    const { secret } = generateKey('test');
    expect(parseKey(secret.replace('svc_test_', 'svc_prod_'))).toBeNull();
    expect(parseKey(secret.slice(0, -1))).toBeNull();
    expect(parseKey(secret + 'x')).toBeNull();
    expect(parseKey(secret.slice(0, 20) + '-' + secret.slice(21))).toBeNull();
    expect(parseKey('sk-' + secret)).toBeNull();
  });

  it('has 131 bits of secret: no two of many keys share their secret part', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(generateKey('live').secret.slice(21, 43));
    expect(seen.size).toBe(2000);
  });

  it('redacts to the prefix and last four characters', () => {
    const { secret } = generateKey('live');
    const r = redactKey(secret);
    expect(r.startsWith(secret.slice(0, 13))).toBe(true);
    expect(r.endsWith(secret.slice(-4))).toBe(true);
    expect(r.length).toBeLessThan(24);
  });
});

describe('key hashing', () => {
  it('verifies the secret and nothing else, with a fresh salt each time', async () => {
    const { secret } = generateKey('live');
    const a = await hashSecret(secret);
    const b = await hashSecret(secret);
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
    expect(await verifySecret(secret, a.salt, a.hash)).toBe(true);
    expect(await verifySecret(secret, b.salt, b.hash)).toBe(true);
    expect(await verifySecret(secret, a.salt, b.hash)).toBe(false);
    expect(await verifySecret(generateKey('live').secret, a.salt, a.hash)).toBe(false);
  });
});
