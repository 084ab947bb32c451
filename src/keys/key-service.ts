/** Creating keys, shared by the HTTP API and the operator CLI. */
import type { ApiKeyRecord, Environment, KeyStore } from '../store/types.js';
import { generateKey, redactKey } from './key-format.js';
import { hashSecret } from './key-hash.js';

export interface CreatedKey {
  record: ApiKeyRecord;
  /** Shown once, to the creator; only its salted hash is stored. */
  secret: string;
}

export async function createApiKey(
  keys: KeyStore,
  input: {
    accountId: string;
    environment: Environment;
    name: string | null;
    dailyCreditLimit: number | null;
    /** Per-key rate limits (docs/rate-limits.md); null or absent: the configured default. */
    rpmLimit?: number | null;
    tpmLimit?: number | null;
    /** The key creating this one through the API; absent for the operator's keys (CLI, admin API). */
    parentKeyId?: string | null;
    /** Refuse when the account already holds this many active keys (the public API's bound). */
    activeKeyLimit?: number | null;
  },
): Promise<CreatedKey> {
  const { secret, keyId } = generateKey(input.environment);
  const { salt, hash } = await hashSecret(secret);
  const record = await keys.insertKey({
    id: keyId,
    accountId: input.accountId,
    environment: input.environment,
    name: input.name,
    salt,
    secretHash: hash,
    redacted: redactKey(secret),
    dailyCreditLimit: input.dailyCreditLimit,
    rpmLimit: input.rpmLimit ?? null,
    tpmLimit: input.tpmLimit ?? null,
    parentKeyId: input.parentKeyId ?? null,
    activeKeyLimit: input.activeKeyLimit ?? null,
  });
  return { record, secret };
}

/** The public view of a key: never the secret nor its hash. */
export function keyView(k: ApiKeyRecord): Record<string, unknown> {
  return {
    id: k.id,
    object: 'api_key',
    name: k.name,
    environment: k.environment,
    redacted_key: k.redacted,
    daily_credit_limit: k.dailyCreditLimit,
    parent_key_id: k.parentKeyId,
    rpm_limit: k.rpmLimit,
    tpm_limit: k.tpmLimit,
    created_at: Math.floor(k.createdAt / 1000),
    revoked_at: k.revokedAt === null ? null : Math.floor(k.revokedAt / 1000),
  };
}
