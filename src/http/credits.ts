import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';

const DAY_MS = 86_400_000;

export const creditsRoutes = new Hono<AppEnv>().get('/', async (c) => {
  const { store, clock } = c.get('deps');
  const key = c.get('key');
  const b = await store.ledger.balance(key.accountId, key.environment);
  const expiry = b.earnedNextExpiry;
  return c.json({
    object: 'credit_balance',
    account_id: key.accountId,
    environment: key.environment,
    total_credits: b.earned + b.purchased,
    earned_credits: {
      balance: b.earned,
      expires_at: expiry === null ? null : new Date(expiry).toISOString(),
      days_remaining: expiry === null ? null : Math.max(0, Math.ceil((expiry - clock.now()) / DAY_MS)),
    },
    purchased_credits: { balance: b.purchased, expires_at: null },
    reserved_credits: b.reserved,
    currency: 'SVC_CREDITS',
  });
});
