/**
 * The rate-limit step of a completion, between the quote and the credit hold: a refused request is
 * answered 429 before it can hold credits. Nothing is asked of the limiter for a key without limits.
 *
 * A key created through the API by a limited key is its child (docs/api.md, "Key families"): its requests
 * count in the windows of every limited ancestor too, so a leaked key that mints keys cannot multiply its
 * rate limit. The ancestors are read from the store (one read each, only for keys that have a parent).
 */
import { withLedgerRetries } from '../billing/meter.js';
import type { ApiKeyRecord } from '../store/types.js';
import { rateLimitError, rateLimitHeaders } from './rate-limit-headers.js';
import { limitsFor, type RateLimiter, type RateLimits } from './rate-limiter.js';

export interface RateLimiting {
  limiter: RateLimiter;
  /** `rate_limits.rpm` / `.tpm` of the configuration: the limits of a key that has none of its own. */
  defaults: RateLimits;
}

/** How the ancestors are read: the key store's lookup, and the ledger calls' retry delays. */
export interface KeyLookup {
  findKey(id: string): Promise<ApiKeyRecord | null>;
  retryDelaysMs: readonly number[];
}

/** Families are shallow in practice; a bound keeps a corrupted parent chain from looping. */
const MAX_FAMILY_DEPTH = 32;

/** Whether a key's requests are limited in any way, so that keys it creates must be its children. */
export function isLimited(key: Pick<ApiKeyRecord, 'dailyCreditLimit' | 'rpmLimit' | 'tpmLimit'>, defaults: RateLimits): boolean {
  const limits = limitsFor(key, defaults);
  return key.dailyCreditLimit !== null || limits.rpm !== null || limits.tpm !== null;
}

/** Admits the request or throws the 429; answers the x-ratelimit-* headers for the response. */
export async function admitRate(
  rate: RateLimiting,
  key: ApiKeyRecord,
  quote: { promptTokens: number; maxOutputTokens: number },
  keys: KeyLookup,
): Promise<Record<string, string>> {
  const limits = limitsFor(key, rate.defaults);
  const family = key.parentKeyId === null ? [] : await ancestorsOf(key, keys);
  const ancestors = family.map((k) => ({ keyId: k.id, limits: limitsFor(k, rate.defaults) })).filter((w) => w.limits.rpm !== null || w.limits.tpm !== null);
  if (limits.rpm === null && limits.tpm === null && ancestors.length === 0) return {};
  const tokens = quote.promptTokens + quote.maxOutputTokens;
  const decision = await rate.limiter.admit({ keyId: key.id, limits, tokens, ancestors, familyId: family.at(-1)?.id ?? key.id });
  if (!decision.allowed) throw rateLimitError(decision, tokens);
  return rateLimitHeaders(decision);
}

/** The key's parent, grandparent ... up to a key with no parent, nearest first. */
async function ancestorsOf(key: ApiKeyRecord, keys: KeyLookup): Promise<ApiKeyRecord[]> {
  const out: ApiKeyRecord[] = [];
  const seen = new Set([key.id]);
  let parent = key.parentKeyId;
  while (parent !== null && !seen.has(parent) && out.length < MAX_FAMILY_DEPTH) {
    const id = parent;
    const found = await withLedgerRetries(() => keys.findKey(id), keys.retryDelaysMs);
    if (found === null) break;
    out.push(found);
    seen.add(found.id);
    parent = found.parentKeyId;
  }
  return out;
}
