/**
 * Bearer-key authentication. Every request reads the key row (no cache), so a revocation made through
 * any instance refuses the very next request everywhere. Malformed keys (bad prefix, length or checksum)
 * are refused before any database read. The HMAC check of a secret already verified against the same row
 * is a constant-time comparison (src/keys/verified-secrets.ts).
 */
import type { MiddlewareHandler } from 'hono';
import type { AppDeps, AppEnv } from '../../core/deps.js';
import type { ApiKeyRecord } from '../../store/types.js';
import { withLedgerRetries } from '../../billing/meter.js';
import { unauthorized } from '../../openai/errors.js';
import { parseKey } from '../../keys/key-format.js';
import { VerifiedSecrets } from '../../keys/verified-secrets.js';

/** One per process: key ids are unique across stores, and an entry matches only the row it was verified against. */
const verified = new VerifiedSecrets();

const INVALID = 'Invalid API key. Keys start with svc_live_ or svc_test_; create one with `npx svc-gateway keys create`.';

export const auth: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set('key', await authenticate(c.get('deps'), c.req.header('authorization'), c.req.header('x-api-key')));
  await next();
};

/**
 * The key a request presents, from its `Authorization` and `x-api-key` headers; throws the 401 that says
 * what is wrong. Shared by this middleware and the Node entry's direct path (src/runtime/node/direct-doors.ts).
 */
export async function authenticate(deps: AppDeps, header: string | undefined, xApiKey: string | undefined): Promise<ApiKeyRecord> {
  // Anthropic's clients send the key as `x-api-key` (Claude Code, the Anthropic SDKs); Bearer wins when both are sent.
  const apiKey = header === undefined ? xApiKey : undefined;
  if (!header && !apiKey) throw unauthorized('missing_api_key', 'Missing API key: send the header `Authorization: Bearer <key>` (or `x-api-key: <key>`).');
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (header !== undefined && !match) throw unauthorized('invalid_api_key', 'Malformed Authorization header: expected `Bearer <key>`.');
  const parsed = parseKey((match?.[1] ?? apiKey ?? '').trim());
  if (!parsed) throw unauthorized('invalid_api_key', INVALID);
  // Bounded like every ledger call: a database that neither answers nor refuses gets a 503 in time, not a
  // request that hangs until it is back (the reads are retried while it is unreachable, about 3 s).
  const key = await withLedgerRetries(() => deps.store.keys.findKey(parsed.keyId), deps.limits.ledgerRetryDelaysMs);
  if (!key || key.environment !== parsed.environment || !(await verified.verify(key.id, parsed.secret, key.salt, key.secretHash))) {
    throw unauthorized('invalid_api_key', INVALID);
  }
  if (key.revokedAt !== null) throw unauthorized('revoked_api_key', 'This API key has been revoked.');
  return key;
}
