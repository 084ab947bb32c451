import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../core/deps.js';
import { forbidden, notFound, unauthorized } from '../openai/errors.js';
import { StoreError } from '../store/errors.js';
import { safeParseReporting, validationError } from '../openai/validation-errors.js';
import { canSee, escalation } from '../keys/key-policy.js';
import { createApiKey, keyView } from '../keys/key-service.js';
import { isLimited, refuseTooDeep } from '../ratelimit/admit.js';
import { inheritRateLimits, looserRateLimit } from '../ratelimit/key-limits.js';
import { readJson } from './json-body.js';

const createBody = z
  .object({
    name: z.string().min(1).max(128).nullable().optional(),
    environment: z.enum(['live', 'test']).optional(),
    daily_credit_limit: z.number().int().min(1).nullable().optional(),
    rpm_limit: z.number().int().min(1).max(1e9).nullable().optional(),
    tpm_limit: z.number().int().min(1).max(1e12).nullable().optional(),
  })
  .strict();

export const apiKeysRoutes = new Hono<AppEnv>()
  .get('/', async (c) => {
    const actor = c.get('key');
    const keys = await c.get('deps').store.keys.listActiveKeys(actor.accountId);
    return c.json({ object: 'list', data: keys.filter((k) => canSee(actor, k)).map(keyView) });
  })
  .post('/', async (c) => {
    const actor = c.get('key');
    const parsed = safeParseReporting(createBody, await readJson(c));
    if (!parsed.success) throw validationError(parsed.error);
    const b = parsed.data;
    // A new key inherits the creator's environment and cap unless it asks for a weaker one.
    const wanted = {
      environment: b.environment ?? actor.environment,
      dailyCreditLimit: b.daily_credit_limit === undefined ? actor.dailyCreditLimit : b.daily_credit_limit,
    };
    const refused = escalation(actor, wanted);
    if (refused) throw forbidden('key_escalation', refused.message, refused.param);
    const rate = inheritRateLimits(actor, { rpmLimit: b.rpm_limit, tpmLimit: b.tpm_limit });
    // A limited actor's new key (a daily cap, or a rate limit of its own or the configured default) is its
    // child: it shares the actor's daily budget and rate windows and is revoked with it, so minting keys
    // cannot multiply a limit. An unlimited actor has nothing to multiply, and its keys stand alone, so a key
    // can be rotated through the API (docs/api.md, "Key families"). An actor revoked since its
    // authentication cannot have a child.
    const { store, rateLimiting, limits } = c.get('deps');
    const limited = isLimited(actor, rateLimiting.defaults);
    if (limited) await refuseTooDeep(actor, { findKey: (id) => store.keys.findKey(id), retryDelaysMs: limits.ledgerRetryDelaysMs });
    const created = await createApiKey(store.keys, {
      accountId: actor.accountId,
      name: b.name ?? null,
      ...wanted,
      ...rate,
      parentKeyId: limited ? actor.id : null,
      activeKeyLimit: limits.maxApiKeysPerAccount,
    }).catch((error: unknown) => {
      if (error instanceof StoreError && error.code === 'not_found') throw unauthorized('revoked_api_key', 'This API key has been revoked.');
      if (error instanceof StoreError && error.code === 'limit_exceeded') {
        throw forbidden(
          'api_key_limit_reached',
          `This account already has ${limits.maxApiKeysPerAccount} active API keys, the most it may hold; revoke one to create another.`,
        );
      }
      throw error;
    });
    return c.json({ ...keyView(created.record), secret: created.secret }, 201);
  })
  .delete('/:id', async (c) => {
    const actor = c.get('key');
    const { store } = c.get('deps');
    const id = c.req.param('id');
    const target = await store.keys.findKey(id);
    // Keys of other accounts, hidden environments and already revoked keys all answer the same 404.
    if (!target || target.accountId !== actor.accountId || !canSee(actor, target) || target.revokedAt !== null) {
      throw notFound('api_key_not_found', `No API key '${id}' in this account.`, 'id');
    }
    if (target.id !== actor.id) {
      const refused = escalation(actor, target);
      if (refused) throw forbidden('key_escalation', refused.message);
      // A rate-limited key may not revoke a looser one (it could not have created it either).
      const looser = looserRateLimit(actor, target);
      if (looser) throw forbidden('key_escalation', `A key with a ${looser} cannot revoke a key with a higher one or none.`, looser);
    }
    // Revokes the key's descendants with it, in the same step.
    const revoked = await store.keys.revokeKey(id);
    return c.json({ ...keyView(revoked ?? target), deleted: true });
  });
