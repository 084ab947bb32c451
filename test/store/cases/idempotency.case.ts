import { describe, expect, it } from 'vitest';
import type { IdempotencyClaimInput, StoredResponse } from '../../../src/store/types.js';
import { DAY, MINUTE, type OpenStore, T0, useFreshStore } from './harness.js';

const LEASE = 30_000;
const TTL = DAY;

function claimInput(overrides: Partial<IdempotencyClaimInput> = {}): IdempotencyClaimInput {
  return { keyId: 'key_a', idempotencyKey: 'idem-1', fingerprint: 'sha256:body-1', leaseMs: LEASE, ttlMs: TTL, ...overrides };
}

const answer: StoredResponse = {
  status: 200,
  contentType: 'application/json',
  body: '{"id":"chatcmpl-1","choices":[{"message":{"content":"héllo 🌍, \\u0000 and a raw \u0000 NUL"}}]}',
};

/** A whole SSE stream of a long answer, about 4 MB. */
function sseStream(): string {
  const event = (i: number) => `data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"content":"token ${i} ü"}}]}\n\n`;
  const parts: string[] = [];
  for (let i = 0; i < 50_000; i++) parts.push(event(i));
  parts.push('data: [DONE]\n\n');
  return parts.join('');
}

export function idempotencyCases(open: OpenStore): void {
  describe('idempotency records', () => {
    const h = useFreshStore(open);

    it('answers the first claim claimed, and the same request in flight in_flight until the lease ends', async () => {
      const { store, clock } = h();
      const first = await store.idempotency.claim(claimInput());
      expect(first).toEqual({ status: 'claimed', takeover: false, token: expect.any(String) });
      clock.advance(10_000);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: LEASE - 10_000 });
      // Another body under the same key is a mismatch, in flight or completed.
      expect(await store.idempotency.claim(claimInput({ fingerprint: 'sha256:body-2' }))).toEqual({ status: 'mismatch' });
      // Keys are per API key: the same idempotency key of another API key is another record.
      expect(await store.idempotency.claim(claimInput({ keyId: 'key_b', fingerprint: 'sha256:body-2' }))).toMatchObject({
        status: 'claimed',
        takeover: false,
      });
    });

    it('replays the completed answer byte for byte until the ttl, and then forgets it', async () => {
      const { store, clock } = h();
      const claimed = await store.idempotency.claim(claimInput());
      if (claimed.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(5_000);
      expect(await store.idempotency.complete('key_a', 'idem-1', answer, claimed.token)).toBe(true);
      // Completing again changes nothing: the first answer stays.
      expect(await store.idempotency.complete('key_a', 'idem-1', { ...answer, body: 'other' }, claimed.token)).toBe(false);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'completed', response: answer });
      expect(await store.idempotency.claim(claimInput({ fingerprint: 'sha256:body-2' }))).toEqual({ status: 'mismatch' });
      // A completed claim is no longer anyone's to renew or release.
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE, claimed.token)).toBe(false);
      expect(await store.idempotency.release('key_a', 'idem-1', claimed.token)).toBe(false);

      clock.set(T0 + TTL - 1);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'completed', response: answer });
      // The ttl runs from the claim: at T0 + ttl the record counts as absent, whatever the body.
      clock.set(T0 + TTL);
      expect(await store.idempotency.claim(claimInput({ fingerprint: 'sha256:body-2' }))).toMatchObject({
        status: 'claimed',
        takeover: false,
      });
    });

    it('keeps a whole SSE stream of a few MB', async () => {
      const { store } = h();
      const claimed = await store.idempotency.claim(claimInput());
      if (claimed.status !== 'claimed') throw new Error('expected a claim');
      const stream: StoredResponse = { status: 200, contentType: 'text/event-stream; charset=utf-8', body: sseStream() };
      expect(stream.body.length).toBeGreaterThan(4_000_000);
      expect(await store.idempotency.complete('key_a', 'idem-1', stream, claimed.token)).toBe(true);
      const replay = await store.idempotency.claim(claimInput());
      expect(replay.status).toBe('completed');
      if (replay.status !== 'completed') return;
      expect(replay.response.body.length).toBe(stream.body.length);
      expect(replay.response).toEqual(stream);
    });

    it('lets a claim whose lease ran out be taken over, and fences off its former owner', async () => {
      const { store, clock } = h();
      const first = await store.idempotency.claim(claimInput());
      if (first.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(LEASE - 1);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: 1 });
      clock.advance(1);
      // The lease is due: a different body is still a mismatch (the key stays bound to its first body).
      expect(await store.idempotency.claim(claimInput({ fingerprint: 'sha256:body-2' }))).toEqual({ status: 'mismatch' });
      const second = await store.idempotency.claim(claimInput());
      expect(second).toEqual({ status: 'claimed', takeover: true, token: expect.any(String) });
      if (second.status !== 'claimed') return;
      expect(second.token).not.toBe(first.token);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: LEASE });

      // The former owner, alive after all, can neither renew, complete nor release the new claim.
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE, first.token)).toBe(false);
      expect(await store.idempotency.complete('key_a', 'idem-1', { ...answer, body: 'stale' }, first.token)).toBe(false);
      expect(await store.idempotency.release('key_a', 'idem-1', first.token)).toBe(false);
      expect(await store.idempotency.complete('key_a', 'idem-1', answer, second.token)).toBe(true);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'completed', response: answer });

      // A takeover of a takeover is still a takeover.
      const again = await store.idempotency.claim(claimInput({ idempotencyKey: 'idem-2' }));
      clock.advance(LEASE);
      expect(await store.idempotency.claim(claimInput({ idempotencyKey: 'idem-2' }))).toMatchObject({ takeover: true });
      clock.advance(LEASE);
      expect(await store.idempotency.claim(claimInput({ idempotencyKey: 'idem-2' }))).toMatchObject({ takeover: true });
      expect(again).toMatchObject({ takeover: false });
    });

    it('renews a live claim, and without a token only while its lease runs', async () => {
      const { store, clock } = h();
      const claimed = await store.idempotency.claim(claimInput());
      if (claimed.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(20_000);
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE, claimed.token)).toBe(true);
      clock.advance(20_000); // past the first lease, within the renewed one
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: LEASE - 20_000 });
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE)).toBe(true);
      clock.advance(LEASE);
      // Due and not taken over: the token proves it is still ours; without it nobody can tell.
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE)).toBe(false);
      expect(await store.idempotency.release('key_a', 'idem-1')).toBe(false);
      expect(await store.idempotency.renew('key_a', 'idem-1', LEASE, claimed.token)).toBe(true);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: LEASE });
      expect(await store.idempotency.renew('key_a', 'idem-unknown', LEASE)).toBe(false);
    });

    it('keeps a claim renewed past its ttl alive until its lease ends', async () => {
      const { store, clock } = h();
      const claimed = await store.idempotency.claim(claimInput({ ttlMs: 2 * MINUTE }));
      if (claimed.status !== 'claimed') throw new Error('expected a claim');
      for (let i = 0; i < 5; i++) {
        clock.advance(LEASE - 1_000);
        expect(await store.idempotency.renew('key_a', 'idem-1', LEASE, claimed.token)).toBe(true);
      }
      // Now past the 2-minute ttl, the claim is alive: neither purged nor counted as absent.
      expect(clock.now()).toBeGreaterThan(T0 + 2 * MINUTE);
      expect(await store.idempotency.purgeExpired(100)).toBe(0);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'in_flight', retryAfterMs: LEASE });
      expect(await store.idempotency.complete('key_a', 'idem-1', answer, claimed.token)).toBe(true);
      clock.advance(LEASE);
      expect(await store.idempotency.purgeExpired(100)).toBe(1);
    });

    it('release lets a retry run the request, with any body', async () => {
      const { store } = h();
      const first = await store.idempotency.claim(claimInput());
      if (first.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.idempotency.release('key_a', 'idem-1', first.token)).toBe(true);
      expect(await store.idempotency.release('key_a', 'idem-1', first.token)).toBe(false);
      expect(await store.idempotency.claim(claimInput({ fingerprint: 'sha256:body-2' }))).toMatchObject({
        status: 'claimed',
        takeover: false,
      });
      // Without a token, release and complete act on the key's live claim.
      expect(await store.idempotency.release('key_a', 'idem-1')).toBe(true);
      expect(await store.idempotency.claim(claimInput())).toMatchObject({ status: 'claimed' });
      expect(await store.idempotency.complete('key_a', 'idem-1', answer)).toBe(true);
      expect(await store.idempotency.release('key_a', 'idem-1')).toBe(false);
      expect(await store.idempotency.complete('key_a', 'idem-unknown', answer)).toBe(false);
      expect(await store.idempotency.claim(claimInput())).toEqual({ status: 'completed', response: answer });
    });

    it('purges records past their ttl, oldest first, up to the limit', async () => {
      const { store, clock } = h();
      const done = async (idempotencyKey: string, ttlMs: number) => {
        const claimed = await store.idempotency.claim(claimInput({ idempotencyKey, ttlMs, leaseMs: 1_000 }));
        if (claimed.status !== 'claimed') throw new Error('expected a claim');
        await store.idempotency.complete('key_a', idempotencyKey, answer, claimed.token);
      };
      await done('a', 3 * MINUTE);
      await done('b', MINUTE);
      await done('c', 2 * MINUTE);
      await done('keep', 10 * MINUTE);
      // An in-flight claim whose owner died: its ttl still ends it.
      await store.idempotency.claim(claimInput({ idempotencyKey: 'abandoned', ttlMs: MINUTE, leaseMs: 1_000 }));
      expect(await store.idempotency.purgeExpired(10)).toBe(0);
      clock.set(T0 + 3 * MINUTE);
      expect(await store.idempotency.purgeExpired(0)).toBe(0);
      expect(await store.idempotency.purgeExpired(2)).toBe(2);
      // b and abandoned (1 minute) went first; c (2 minutes) and a (3 minutes) remain, still there just before c's end.
      clock.set(T0 + 2 * MINUTE - 1);
      expect(await store.idempotency.claim(claimInput({ idempotencyKey: 'c', fingerprint: 'other' }))).toEqual({ status: 'mismatch' });
      clock.set(T0 + 3 * MINUTE);
      expect(await store.idempotency.purgeExpired(10)).toBe(2);
      expect(await store.idempotency.purgeExpired(10)).toBe(0);
      expect(await store.idempotency.claim(claimInput({ idempotencyKey: 'keep' }))).toEqual({ status: 'completed', response: answer });
    });

    it('refuses malformed input', async () => {
      const { store } = h();
      const refused = { code: 'invalid_input' };
      await expect(store.idempotency.claim(claimInput({ idempotencyKey: '' }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.claim(claimInput({ idempotencyKey: 'k'.repeat(256) }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.claim(claimInput({ keyId: '' }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.claim(claimInput({ fingerprint: '' }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.claim(claimInput({ leaseMs: 0 }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.claim(claimInput({ ttlMs: 1.5 }))).rejects.toMatchObject(refused);
      await expect(store.idempotency.renew('key_a', 'idem-1', -1)).rejects.toMatchObject(refused);
      await expect(store.idempotency.complete('key_a', 'idem-1', { ...answer, status: 99 })).rejects.toMatchObject(refused);
      await expect(store.idempotency.purgeExpired(-1)).rejects.toMatchObject(refused);
      expect(await store.idempotency.claim(claimInput({ idempotencyKey: 'k'.repeat(255) }))).toMatchObject({ status: 'claimed' });
    });

    it('gives a key to exactly one of many concurrent claims, and its expired lease to exactly one taker', async () => {
      const { store, clock } = h();
      for (let round = 0; round < 5; round++) {
        const key = `concurrent-${round}`;
        const claims = await Promise.all(Array.from({ length: 8 }, () => store.idempotency.claim(claimInput({ idempotencyKey: key }))));
        expect(claims.filter((c) => c.status === 'claimed')).toEqual([{ status: 'claimed', takeover: false, token: expect.any(String) }]);
        expect(claims.filter((c) => c.status === 'in_flight')).toHaveLength(7);
      }
      clock.advance(LEASE);
      for (let round = 0; round < 5; round++) {
        const key = `concurrent-${round}`;
        const claims = await Promise.all(Array.from({ length: 8 }, () => store.idempotency.claim(claimInput({ idempotencyKey: key }))));
        expect(claims.filter((c) => c.status === 'claimed')).toEqual([{ status: 'claimed', takeover: true, token: expect.any(String) }]);
        expect(claims.filter((c) => c.status === 'in_flight')).toHaveLength(7);
      }
    });
  });
}
