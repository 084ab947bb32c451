/**
 * The rate-limit step of a completion, between the quote and the credit hold: a refused request is
 * answered 429 before it can hold credits. Nothing is asked of the limiter for a key without limits.
 *
 * A key created through the API by a limited key is its child (docs/api.md, "Key families"): its requests
 * count in the windows of every limited ancestor too, so a leaked key that mints keys cannot multiply its
 * rate limit. The ancestors are read from the store (one read each, only for keys that have a parent).
 */
import { withLedgerRetries } from '../billing/meter.js';
import { forbidden, type GatewayError } from '../openai/errors.js';
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

/**
 * How deep a key family may go (a key and its ancestors). Creation refuses a child beyond it, and a chain
 * found longer (a corrupted parent chain) refuses the request: a window left out would be a limit escaped.
 */
export const MAX_FAMILY_DEPTH = 16;

function familyTooDeep(): GatewayError {
  return forbidden('key_family_too_deep', `Key families may be at most ${MAX_FAMILY_DEPTH} keys deep: create this key from a key nearer the operator's.`);
}

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
  if (family.length >= MAX_FAMILY_DEPTH) throw familyTooDeep();
  const ancestors = family.map((k) => ({ keyId: k.id, limits: limitsFor(k, rate.defaults) })).filter((w) => w.limits.rpm !== null || w.limits.tpm !== null);
  if (limits.rpm === null && limits.tpm === null && ancestors.length === 0) return {};
  const tokens = quote.promptTokens + quote.maxOutputTokens;
  const decision = await rate.limiter.admit({ keyId: key.id, limits, tokens, ancestors, familyId: family.at(-1)?.id ?? key.id });
  if (!decision.allowed) throw rateLimitError(decision, tokens);
  return rateLimitHeaders(decision);
}

/** A key created by `creator` would be too deep in its family: refused (403 key_family_too_deep). */
export async function refuseTooDeep(creator: ApiKeyRecord, keys: KeyLookup): Promise<void> {
  if (creator.parentKeyId === null) return;
  if ((await ancestorsOf(creator, keys)).length + 2 > MAX_FAMILY_DEPTH) throw familyTooDeep();
}

/**
 * The key's parent, grandparent ... up to a key with no parent, nearest first. Past MAX_FAMILY_DEPTH it
 * stops with that many, which the callers refuse.
 */
async function ancestorsOf(key: ApiKeyRecord, keys: KeyLookup): Promise<ApiKeyRecord[]> {
  const out: ApiKeyRecord[] = [];
  const seen = new Set([key.id]);
  let parent = key.parentKeyId;
  while (parent !== null && out.length < MAX_FAMILY_DEPTH) {
    // A cycle cannot be made through the API; met anyway, the chain is not one to trust.
    if (seen.has(parent)) throw familyTooDeep();
    const id = parent;
    const found = await withLedgerRetries(() => keys.findKey(id), keys.retryDelaysMs);
    if (found === null) break;
    out.push(found);
    seen.add(found.id);
    parent = found.parentKeyId;
  }
  return out;
}
