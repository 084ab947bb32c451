/**
 * The decision rules every limiter follows (in process, and the Redis script), run against each.
 * The Redis limiter judges time on Redis's own clock, so only the cases that need no time travel run on it.
 */
import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/ratelimit/rate-limiter.js';

let n = 0;
const freshKey = (): string => `key_case_${process.pid}_${Date.now()}_${++n}`;

export function limiterCases(name: string, make: () => RateLimiter): void {
  describe(`rate limiter rules: ${name}`, () => {
    it('admits exactly rpm requests of 200 concurrent ones, with the remaining count going down', async () => {
      const limiter = make();
      const keyId = freshKey();
      const decisions = await Promise.all(
        Array.from({ length: 200 }, () => limiter.admit({ keyId, limits: { rpm: 37, tpm: null }, tokens: 10 })),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(37);
      const remaining = decisions.filter((d) => d.allowed).map((d) => d.requests?.remaining);
      expect(new Set(remaining).size).toBe(37);
      expect(Math.min(...(remaining as number[]))).toBe(0);
      for (const d of decisions.filter((x) => !x.allowed)) {
        expect(d.requests).toMatchObject({ limit: 37, remaining: 0 });
        expect(d.retryAfterMs).toBeGreaterThan(50_000);
        expect(d.retryAfterMs).toBeLessThanOrEqual(60_000);
        expect(d.tokens).toBeNull();
      }
      await limiter.close();
    });

    it('admits by tokens: the sum of admitted requests never passes tpm', async () => {
      const limiter = make();
      const keyId = freshKey();
      const decisions = await Promise.all(
        Array.from({ length: 200 }, (_, i) => limiter.admit({ keyId, limits: { rpm: null, tpm: 1000 }, tokens: 7 + (i % 5) })),
      );
      const admitted = decisions.map((d, i) => (d.allowed ? 7 + (i % 5) : 0)).reduce((a, b) => a + b, 0);
      expect(admitted).toBeLessThanOrEqual(1000);
      expect(admitted).toBeGreaterThan(1000 - 12);
      const last = decisions.filter((d) => d.allowed).at(-1);
      expect(last?.tokens).toMatchObject({ limit: 1000, remaining: 1000 - admitted });
      expect(decisions.find((d) => !d.allowed)?.requests).toBeNull();
      await limiter.close();
    });

    it('refuses a request larger than tpm by itself, with no wait that could help, and records nothing', async () => {
      const limiter = make();
      const keyId = freshKey();
      const big = await limiter.admit({ keyId, limits: { rpm: 10, tpm: 100 }, tokens: 101 });
      expect(big).toMatchObject({ allowed: false, tooLarge: true, retryAfterMs: 0 });
      const next = await limiter.admit({ keyId, limits: { rpm: 10, tpm: 100 }, tokens: 100 });
      expect(next).toMatchObject({ allowed: true, requests: { remaining: 9 }, tokens: { remaining: 0 } });
      await limiter.close();
    });

    it('keeps keys apart', async () => {
      const limiter = make();
      const a = freshKey();
      const b = freshKey();
      expect((await limiter.admit({ keyId: a, limits: { rpm: 1, tpm: null }, tokens: 1 })).allowed).toBe(true);
      expect((await limiter.admit({ keyId: a, limits: { rpm: 1, tpm: null }, tokens: 1 })).allowed).toBe(false);
      expect((await limiter.admit({ keyId: b, limits: { rpm: 1, tpm: null }, tokens: 1 })).allowed).toBe(true);
      await limiter.close();
    });

    // Key families (docs/api.md): a key's requests count in its limited ancestors' windows too.
    it('a family of keys minted by a limited key admits no more than the parent allows, however many members', async () => {
      const limiter = make();
      const parent = freshKey();
      const children = [freshKey(), freshKey(), freshKey(), freshKey()];
      const up = [{ keyId: parent, limits: { rpm: 5, tpm: null } }];
      const decisions = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 5 === 4
            ? limiter.admit({ keyId: parent, limits: { rpm: 5, tpm: null }, tokens: 1 })
            : limiter.admit({ keyId: children[i % 5] as string, limits: { rpm: 5, tpm: null }, tokens: 1, ancestors: up, familyId: parent }),
        ),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      // The parent's full window is what refuses, and says so: its limit, nothing remaining, a wait.
      for (const d of decisions.filter((x) => !x.allowed)) {
        expect(d.requests).toMatchObject({ limit: 5, remaining: 0 });
        expect(d.retryAfterMs).toBeGreaterThan(50_000);
      }
      await limiter.close();
    });

    it("a request one window refuses is recorded in none: a child's own limit spends nothing of its parent's", async () => {
      const limiter = make();
      const parent = freshKey();
      const child = freshKey();
      const up = [{ keyId: parent, limits: { rpm: 5, tpm: 1000 } }];
      const asChild = () => limiter.admit({ keyId: child, limits: { rpm: 3, tpm: null }, tokens: 10, ancestors: up, familyId: parent });
      for (let i = 0; i < 3; i++) expect((await asChild()).allowed).toBe(true);
      // The child's own window is full: refused, and the parent's window does not count it.
      const refused = await asChild();
      expect(refused).toMatchObject({ allowed: false, requests: { limit: 3, remaining: 0 } });
      const asParent = () => limiter.admit({ keyId: parent, limits: { rpm: 5, tpm: 1000 }, tokens: 10 });
      expect(await asParent()).toMatchObject({ allowed: true, requests: { remaining: 1 }, tokens: { remaining: 1000 - 40 } });
      expect(await asParent()).toMatchObject({ allowed: true, requests: { remaining: 0 } });
      expect((await asParent()).allowed).toBe(false);
      await limiter.close();
    });

    it('an unlimited key with a limited ancestor is limited by it (headers speak for the window that binds)', async () => {
      const limiter = make();
      const parent = freshKey();
      const child = freshKey();
      const up = [{ keyId: parent, limits: { rpm: null, tpm: 100 } }];
      const first = await limiter.admit({ keyId: child, limits: { rpm: null, tpm: null }, tokens: 60, ancestors: up, familyId: parent });
      expect(first).toMatchObject({ allowed: true, requests: null, tokens: { limit: 100, remaining: 40 } });
      const second = await limiter.admit({ keyId: child, limits: { rpm: null, tpm: null }, tokens: 60, ancestors: up, familyId: parent });
      expect(second).toMatchObject({ allowed: false, tooLarge: false, tokens: { limit: 100, remaining: 40 } });
      await limiter.close();
    });
  });
}
