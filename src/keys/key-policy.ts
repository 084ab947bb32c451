/**
 * Which keys a key may see, create and revoke. A key may act on keys no stronger than itself:
 * a test key only on test keys; a capped key only on keys with a cap no higher than its own.
 * Live keys see the account's test keys too, as a Stripe live key would.
 */
import type { Environment } from '../store/types.js';

export interface KeyStrength {
  environment: Environment;
  dailyCreditLimit: number | null;
}

export function canSee(actor: KeyStrength, target: KeyStrength): boolean {
  return actor.environment === 'live' || target.environment === 'test';
}

/** Null when allowed; otherwise the reason, naming the parameter at fault. */
export function escalation(actor: KeyStrength, wanted: KeyStrength): { param: string; message: string } | null {
  if (!canSee(actor, wanted)) {
    return { param: 'environment', message: 'A test key cannot create or manage live keys.' };
  }
  if (actor.dailyCreditLimit !== null) {
    if (wanted.dailyCreditLimit === null) {
      return {
        param: 'daily_credit_limit',
        message: `A key capped at ${actor.dailyCreditLimit} credits a day cannot create or manage an uncapped key.`,
      };
    }
    if (wanted.dailyCreditLimit > actor.dailyCreditLimit) {
      return {
        param: 'daily_credit_limit',
        message: `A key capped at ${actor.dailyCreditLimit} credits a day cannot create or manage a key with a higher cap.`,
      };
    }
  }
  return null;
}
