/** Operator endpoints: accounts, credit grants (idempotent), and keys of any account. */
import { Hono } from 'hono';
import { z } from 'zod';
import { availableOf } from '../../billing/meter.js';
import type { AppEnv } from '../../core/deps.js';
import { newId } from '../../core/ids.js';
import { notFound } from '../../openai/errors.js';
import { safeParseReporting, validationError } from '../../openai/validation-errors.js';
import { createApiKey, keyView } from '../../keys/key-service.js';
import type { Account, Balance, Store } from '../../store/types.js';
import { readJson } from '../json-body.js';

const environment = z.enum(['live', 'test']).default('live');

const accountBody = z.object({ name: z.string().min(1).max(128).nullable().optional() }).strict();

const grantBody = z
  .object({
    kind: z.enum(['purchased', 'earned']),
    amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    environment,
    expires_at: z.iso.datetime({ offset: true }).optional(),
    idempotency_key: z.string().min(1).max(255).optional(),
  })
  .strict()
  .refine((g) => (g.kind === 'earned') === (g.expires_at !== undefined), {
    message: 'earned credits need expires_at; purchased credits do not expire',
    path: ['expires_at'],
  });

const keyBody = z
  .object({
    name: z.string().min(1).max(128).nullable().optional(),
    environment,
    daily_credit_limit: z.number().int().min(1).nullable().optional(),
    rpm_limit: z.number().int().min(1).max(1e9).nullable().optional(),
    tpm_limit: z.number().int().min(1).max(1e12).nullable().optional(),
  })
  .strict();

async function parse<T>(schema: z.ZodType<T>, body: unknown): Promise<T> {
  const r = safeParseReporting(schema, body);
  if (!r.success) throw validationError(r.error);
  return r.data;
}

async function requireAccount(store: Store, id: string): Promise<Account> {
  const account = await store.keys.getAccount(id);
  if (!account) throw notFound('account_not_found', `No account '${id}'.`, 'account_id');
  return account;
}

function balanceView(b: Balance): Record<string, unknown> {
  return {
    total_credits: availableOf(b),
    earned_credits: b.earned,
    earned_next_expiry: b.earnedNextExpiry === null ? null : new Date(b.earnedNextExpiry).toISOString(),
    purchased_credits: b.purchased,
    reserved_credits: b.reserved,
  };
}

function accountView(a: Account): Record<string, unknown> {
  return { id: a.id, object: 'account', name: a.name, created_at: Math.floor(a.createdAt / 1000) };
}

export const adminAccountRoutes = new Hono<AppEnv>()
  .post('/accounts', async (c) => {
    const body = await parse(accountBody, await readJson(c));
    const account = await c.get('deps').store.keys.createAccount({ id: newId('acct_'), name: body.name ?? null });
    return c.json(accountView(account), 201);
  })
  .get('/accounts/:id', async (c) => {
    const { store } = c.get('deps');
    const account = await requireAccount(store, c.req.param('id'));
    const [live, test] = await Promise.all([store.ledger.balance(account.id, 'live'), store.ledger.balance(account.id, 'test')]);
    return c.json({ ...accountView(account), balances: { live: balanceView(live), test: balanceView(test) } });
  })
  .post('/accounts/:id/credits', async (c) => {
    const { store } = c.get('deps');
    const account = await requireAccount(store, c.req.param('id'));
    const body = await parse(grantBody, await readJson(c));
    // A billing webhook delivered twice must grant once: the Idempotency-Key header or body field names the grant.
    const idempotencyKey = c.req.header('idempotency-key') ?? body.idempotency_key ?? null;
    const { grant, created } = await store.ledger.grant({
      accountId: account.id,
      environment: body.environment,
      kind: body.kind,
      amount: body.amount,
      expiresAt: body.expires_at === undefined ? null : Date.parse(body.expires_at),
      idempotencyKey,
    });
    const balance = await store.ledger.balance(account.id, body.environment);
    return c.json(
      {
        id: grant.id,
        object: 'credit_grant',
        created,
        account_id: account.id,
        environment: grant.environment,
        kind: grant.kind,
        amount: grant.amount,
        expires_at: grant.expiresAt === null ? null : new Date(grant.expiresAt).toISOString(),
        idempotency_key: idempotencyKey,
        balance: balanceView(balance),
      },
      created ? 201 : 200,
    );
  })
  .post('/accounts/:id/keys', async (c) => {
    const { store } = c.get('deps');
    const account = await requireAccount(store, c.req.param('id'));
    const body = await parse(keyBody, await readJson(c));
    const { record, secret } = await createApiKey(store.keys, {
      accountId: account.id,
      environment: body.environment,
      name: body.name ?? null,
      dailyCreditLimit: body.daily_credit_limit ?? null,
      rpmLimit: body.rpm_limit ?? null,
      tpmLimit: body.tpm_limit ?? null,
    });
    return c.json({ ...keyView(record), secret }, 201);
  })
  .get('/accounts/:id/keys', async (c) => {
    const { store } = c.get('deps');
    const account = await requireAccount(store, c.req.param('id'));
    return c.json({ object: 'list', data: (await store.keys.listActiveKeys(account.id)).map(keyView) });
  })
  .delete('/keys/:id', async (c) => {
    const key = await c.get('deps').store.keys.revokeKey(c.req.param('id'));
    if (!key) throw notFound('api_key_not_found', `No API key '${c.req.param('id')}'.`, 'id');
    return c.json({ ...keyView(key), deleted: true });
  });
