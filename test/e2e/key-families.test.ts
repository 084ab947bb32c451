/**
 * The key-minting attack through the real server (issue 15, item 1): a capped key creates keys, each of
 * which used to get its own daily cap and to survive its creator's revocation. Now they are its children:
 * the family shares the creator's cap, and revoking the creator refuses every child on the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CAP = 2_000;
const CHILDREN = 8;

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

function call(secret: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function mint(secret: string): Promise<{ id: string; secret: string; parent_key_id: string | null; daily_credit_limit: number | null }> {
  const res = await call(secret, 'POST', '/api-keys', { name: 'minted' });
  const body = (await res.json()) as { id: string; secret: string; parent_key_id: string | null; daily_credit_limit: number | null };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

interface Outcome {
  status: number;
  credits: number;
  code: string | null;
  message: string | null;
}

async function spend(secret: string): Promise<Outcome> {
  const res = await chat(gw, secret, { model: 'svc-fast', max_tokens: 40, messages: [{ role: 'user', content: 'Say something short.' }] });
  const body = (await res.json()) as { svc?: { credits_used: number }; error?: { code: string; message: string } };
  return { status: res.status, credits: body.svc?.credits_used ?? 0, code: body.error?.code ?? null, message: body.error?.message ?? null };
}

describe('a capped key minting keys', () => {
  it('never spends above its cap in a UTC day, however many children it creates', async () => {
    const parent = await gw.seed({ purchased: 1_000_000, dailyCreditLimit: CAP });
    const children = [];
    for (let i = 0; i < CHILDREN; i++) children.push(await mint(parent.secret));
    for (const kid of children) expect(kid).toMatchObject({ parent_key_id: parent.keyId, daily_credit_limit: CAP });
    // A grandchild is in the family too.
    const grandchild = await mint(children[0]!.secret);
    expect(grandchild.parent_key_id).toBe(children[0]!.id);
    const family = [parent.secret, grandchild.secret, ...children.map((kid) => kid.secret)];

    // Every member spends concurrently until each is refused: before, each had its own CAP a day.
    const outcomes: Outcome[] = [];
    await Promise.all(
      family.map(async (secret) => {
        for (;;) {
          const outcome = await spend(secret);
          outcomes.push(outcome);
          if (outcome.status !== 200) return;
        }
      }),
    );
    const spent = outcomes.reduce((sum, outcome) => sum + outcome.credits, 0);
    const served = outcomes.filter((outcome) => outcome.status === 200).length;
    expect(served).toBeGreaterThan(family.length);
    expect(spent).toBeLessThanOrEqual(CAP);
    expect(outcomes.filter((outcome) => outcome.status !== 200).map((o) => [o.status, o.code])).toEqual(
      family.map(() => [402, 'daily_credit_limit_exceeded']),
    );
    // The refusal says whose cap it is: the parent's own, shared with the keys it created; the family's for the others.
    const refusals = outcomes.filter((o) => o.status !== 200).map((o) => o.message ?? '');
    expect(refusals.filter((m) => m.startsWith(`This key's daily credit limit is ${CAP}, shared with the keys it created`))).toHaveLength(1);
    expect(refusals.filter((m) => m.startsWith(`This key was created by another key and shares its family's daily credit limit of ${CAP}`))).toHaveLength(
      family.length - 1,
    );
    expect(await gw.store.ledger.audit()).toMatchObject({ findings: [] });
  });

  it('revoking the parent refuses every descendant on the very next request with 401', async () => {
    const parent = await gw.seed({ purchased: 1_000_000, dailyCreditLimit: CAP });
    const children = [];
    for (let i = 0; i < CHILDREN; i++) children.push(await mint(parent.secret));
    const grandchild = await mint(children[CHILDREN - 1]!.secret);
    const descendants = [...children, grandchild];
    for (const kid of descendants) expect((await spend(kid.secret)).status).toBe(200);

    const revoked = await call(parent.secret, 'DELETE', `/api-keys/${parent.keyId}`);
    expect(revoked.status).toBe(200);
    for (const kid of descendants) {
      for (const res of [await call(kid.secret, 'GET', '/credits'), await chat(gw, kid.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }] })]) {
        expect(res.status).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('revoked_api_key');
      }
      // A revoked family cannot mint again either.
      expect((await call(kid.secret, 'POST', '/api-keys', {})).status).toBe(401);
    }
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });

  it("an uncapped key's keys stand alone, so a key can be rotated through the API", async () => {
    const owner = await gw.seed({ purchased: 10_000 });
    const rotated = await mint(owner.secret);
    expect(rotated).toMatchObject({ parent_key_id: null, daily_credit_limit: null });
    expect((await call(rotated.secret, 'DELETE', `/api-keys/${owner.keyId}`)).status).toBe(200);
    expect((await spend(rotated.secret)).status).toBe(200);
    expect((await call(owner.secret, 'GET', '/credits')).status).toBe(401);
  });
});
