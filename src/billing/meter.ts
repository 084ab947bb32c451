/**
 * One request's credit hold: reserve before the upstream call, then end it exactly once, by settle (the
 * actual cost, capped at the hold) or void (nothing delivered). Every later settle/void returns the first
 * outcome, so racing paths (stream end vs. client disconnect) cannot charge twice.
 */
import { GatewayError } from '../openai/errors.js';
import type { Balance, LedgerStore, UsageRecord } from '../store/types.js';

export interface MeterOutcome {
  charged: number;
  /** Available credits (earned + purchased, net of other holds) after this request. */
  balanceRemaining: number;
}

export function availableOf(balance: Balance): number {
  return balance.earned + balance.purchased;
}

export class Meter {
  private ending: Promise<MeterOutcome> | null = null;

  private constructor(
    private readonly ledger: LedgerStore,
    readonly holdId: string,
    readonly held: number,
    private readonly accountId: string,
    private readonly environment: Balance['environment'],
  ) {}

  /** Holds `amount` credits for the key, or throws the 402 that says why not. */
  static async open(
    ledger: LedgerStore,
    args: { holdId: string; keyId: string; accountId: string; environment: Balance['environment']; amount: number; leaseMs: number },
  ): Promise<Meter> {
    const r = await ledger.reserve({ holdId: args.holdId, keyId: args.keyId, amount: args.amount, leaseMs: args.leaseMs });
    if (r.ok) return new Meter(ledger, args.holdId, r.amount, args.accountId, args.environment);
    switch (r.reason) {
      case 'insufficient_credits':
        throw new GatewayError(
          402,
          'insufficient_credits',
          'insufficient_credits',
          `This request may cost up to ${args.amount} credits (prompt plus the max_tokens bound) but ${r.available} are available. Lower max_tokens or add credits.`,
        );
      case 'daily_limit_exceeded':
        throw new GatewayError(
          402,
          'insufficient_credits',
          'daily_credit_limit_exceeded',
          `This key's daily credit limit is ${r.limit}; ${r.committedToday} are used or held today (UTC) and this request may cost up to ${args.amount}. Lower max_tokens or wait for the next UTC day.`,
        );
      case 'key_inactive':
        throw new GatewayError(401, 'authentication_error', 'revoked_api_key', 'This API key has been revoked.');
    }
  }

  settle(amount: number, usage: UsageRecord): Promise<MeterOutcome> {
    this.ending ??= this.ledger.settle({ holdId: this.holdId, amount, usage }).then(async (r) => {
      if (r.status === 'settled') return { charged: r.charged, balanceRemaining: availableOf(r.balance) };
      if (r.status === 'already_final') return { charged: 0, balanceRemaining: availableOf(r.balance) };
      throw new Error(`settle of unknown hold ${this.holdId}`);
    });
    return this.ending;
  }

  void(): Promise<MeterOutcome> {
    this.ending ??= this.ledger.void(this.holdId).then(async () => ({
      charged: 0,
      balanceRemaining: availableOf(await this.ledger.balance(this.accountId, this.environment)),
    }));
    return this.ending;
  }
}
