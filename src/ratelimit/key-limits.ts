/**
 * The rate limits of a key created through the API. A key with its own limit cannot create a key that
 * escapes it: the new key inherits the creator's limits unless it asks for lower ones, and asking for a
 * higher one or none (null: the configured default) is refused, like a higher daily cap.
 */
import { forbidden } from '../openai/errors.js';

export interface KeyRateLimits {
  rpmLimit: number | null;
  tpmLimit: number | null;
}

const NAMES = { rpmLimit: 'rpm_limit', tpmLimit: 'tpm_limit' } as const;

/**
 * Whether `target` has a looser rate limit than `actor` (none, or a higher one, where the actor has one):
 * a limited key may not manage it (revoke it), as it may not create it.
 */
export function looserRateLimit(actor: KeyRateLimits, target: KeyRateLimits): string | null {
  for (const field of ['rpmLimit', 'tpmLimit'] as const) {
    const own = actor[field];
    const theirs = target[field];
    if (own !== null && (theirs === null || theirs > own)) return NAMES[field];
  }
  return null;
}

export function inheritRateLimits(
  creator: KeyRateLimits,
  asked: { rpmLimit: number | null | undefined; tpmLimit: number | null | undefined },
): KeyRateLimits {
  const out: KeyRateLimits = { rpmLimit: null, tpmLimit: null };
  for (const field of ['rpmLimit', 'tpmLimit'] as const) {
    const own = creator[field];
    const wanted = asked[field] === undefined ? own : asked[field];
    if (own !== null && (wanted === null || wanted > own)) {
      throw forbidden(
        'key_escalation',
        `A key limited to ${own} ${field === 'rpmLimit' ? 'requests' : 'tokens'} per minute cannot create a key with a higher limit or none.`,
        NAMES[field],
      );
    }
    out[field] = wanted ?? null;
  }
  return out;
}
