import type { Balance, GrantInput, ReserveResult, SettleResult } from '../../../src/store/types.js';
import { utcDay } from '../../../src/store/utc-day.js';

/**
 * A plain in-memory ledger written from the contract, independent of any database: the property test
 * replays every operation on it and on the store and requires the same answers.
 */
export interface ModelGrant {
  input: GrantInput;
  remaining: number;
  seq: number;
}

export interface ModelHold {
  id: string;
  amount: number;
  day: string;
  leaseExpiresAt: number;
  createdAt: number;
  status: 'pending' | 'settled' | 'voided';
  /** What a settle charged; null until settled. */
  settled: number | null;
  allocations: { grant: ModelGrant; amount: number }[];
}

export class LedgerModel {
  readonly grants: ModelGrant[] = [];
  readonly holds: ModelHold[] = [];
  granted = 0;
  charged = 0;
  /** Credits written off by reaps (expire entries). */
  expired = 0;
  private readonly committed = new Map<string, number>();

  constructor(
    private readonly accountId: string,
    private readonly dailyLimit: number,
  ) {}

  grant(input: GrantInput): void {
    this.grants.push({ input, remaining: input.amount, seq: this.grants.length });
    this.granted += input.amount;
  }

  reserve(id: string, amount: number, leaseMs: number, now: number): ReserveResult {
    const day = utcDay(now);
    const committed = this.committed.get(day) ?? 0;
    if (committed + amount > this.dailyLimit) {
      return { ok: false, reason: 'daily_limit_exceeded', limit: this.dailyLimit, committedToday: committed };
    }
    const spendable = this.grants.filter((g) => g.remaining > 0 && !expired(g, now)).sort(spendingOrder);
    const available = spendable.reduce((sum, g) => sum + g.remaining, 0);
    if (available < amount) return { ok: false, reason: 'insufficient_credits', available };
    const held: ModelHold = { id, amount, day, leaseExpiresAt: now + leaseMs, createdAt: now, status: 'pending', settled: null, allocations: [] };
    let missing = amount;
    for (const grant of spendable) {
      if (missing === 0) break;
      const take = Math.min(grant.remaining, missing);
      grant.remaining -= take;
      missing -= take;
      held.allocations.push({ grant, amount: take });
    }
    this.holds.push(held);
    this.committed.set(day, committed + amount);
    return { ok: true, holdId: id, amount, leaseExpiresAt: held.leaseExpiresAt, status: 'pending' };
  }

  settle(held: ModelHold | undefined, amount: number, now: number): SettleResult {
    if (!held) return { status: 'unknown_hold' };
    if (held.status !== 'pending') {
      return { status: 'already_final', charged: held.settled ?? 0, voided: held.status === 'voided', balance: this.balance(now) };
    }
    const charged = Math.min(Math.max(amount, 0), held.amount);
    let toCharge = charged;
    for (const allocation of held.allocations) {
      const spent = Math.min(allocation.amount, toCharge);
      toCharge -= spent;
      allocation.grant.remaining += allocation.amount - spent;
    }
    this.finish(held, 'settled', held.amount - charged);
    held.settled = charged;
    this.charged += charged;
    return { status: 'settled', charged, balance: this.balance(now) };
  }

  void(held: ModelHold | undefined): boolean {
    if (held?.status !== 'pending') return false;
    for (const allocation of held.allocations) allocation.grant.remaining += allocation.amount;
    this.finish(held, 'voided', held.amount);
    return true;
  }

  reap(now: number, limit: number): number {
    const due = this.holds
      .filter((held) => held.status === 'pending' && held.leaseExpiresAt <= now)
      .sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
    for (const held of due) this.void(held);
    // After the voids, so what they give back to expired grants is written off in the same reap.
    const expiring = this.grants.filter((g) => g.input.kind === 'earned' && g.remaining > 0 && expired(g, now)).slice(0, limit);
    for (const grant of expiring) {
      this.expired += grant.remaining;
      grant.remaining = 0;
    }
    return due.length;
  }

  pending(): number {
    return this.holds.filter((held) => held.status === 'pending').length;
  }

  balance(now: number): Balance {
    const live = this.grants.filter((g) => !expired(g, now));
    const earnedWithCredits = live.filter((g) => g.input.kind === 'earned' && g.remaining > 0);
    return {
      accountId: this.accountId,
      environment: 'live',
      earned: sum(live.filter((g) => g.input.kind === 'earned').map((g) => g.remaining)),
      earnedNextExpiry: earnedWithCredits.length === 0 ? null : Math.min(...earnedWithCredits.map((g) => g.input.expiresAt ?? Infinity)),
      purchased: sum(live.filter((g) => g.input.kind === 'purchased').map((g) => g.remaining)),
      reserved: sum(this.holds.filter((held) => held.status === 'pending').map((held) => held.amount)),
    };
  }

  private finish(held: ModelHold, status: 'settled' | 'voided', released: number): void {
    held.status = status;
    this.committed.set(held.day, (this.committed.get(held.day) ?? 0) - released);
  }
}

export function expired(grant: ModelGrant, now: number): boolean {
  return grant.input.expiresAt !== null && grant.input.expiresAt <= now;
}

function spendingOrder(a: ModelGrant, b: ModelGrant): number {
  const rank = (g: ModelGrant) => (g.input.kind === 'earned' ? 0 : 1);
  return rank(a) - rank(b) || (a.input.expiresAt ?? 0) - (b.input.expiresAt ?? 0) || a.seq - b.seq;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
