/**
 * The `Idempotency-Key` request header of POST /v1/chat/completions, with Stripe's semantics
 * (docs/api.md, "Idempotent requests"): the same key and the same request from the same API key within
 * 24 hours gets the first answer again (a non-streaming body as it was, a stream's events replayed) and is
 * charged once; the same key with another request is a 409; a request still in flight with that key is a
 * 409 with Retry-After. Only answers are kept: a request that ended without one (refused, failed, cut)
 * releases its key, so a retry runs it again.
 *
 * The hold id derives from the API key and the idempotency key, so a retry after a reserve whose reply was
 * lost finds that hold again instead of taking a second one.
 */
import { DEFAULT_LEDGER_RETRY_DELAYS_MS, withLedgerRetries } from '../billing/meter.js';
import { GatewayError, invalidRequest } from '../openai/errors.js';
import { toBase64url } from '../keys/encoding.js';
import type { IdempotencyStore, StoredResponse } from '../store/types.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long an answer is kept for replay. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long an in-flight claim blocks other requests with the key if its owner dies without releasing it. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
const MAX_KEY_LENGTH = 255;

const encoder = new TextEncoder();

/** The header's value, or null when absent; a malformed one is a 400. */
export function parseIdempotencyKey(value: string | undefined): string | null {
  if (value === undefined) return null;
  // Printable ASCII: the key is echoed in errors and logs, and clients generate UUIDs or similar.
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(value)) {
    throw invalidRequest(
      `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters without spaces (a UUID, for example).`,
      null,
      'invalid_idempotency_key',
    );
  }
  return value;
}

async function sha256(text: string): Promise<string> {
  return toBase64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text))));
}

/** What makes two requests "the same": the body as sent and the headers that change the answer. */
/**
 * `scope`: the door, so that one body valid on two doors is two requests (each answered in its own shape);
 * empty for the chat door, whose fingerprints predate the others.
 */
export function requestFingerprint(body: string, qualityBias: number | null, scope = ''): Promise<string> {
  return sha256(`${scope === '' ? '' : `${scope}\n`}${qualityBias ?? ''}\n${body}`);
}

/** The hold id of an idempotent request: the same for every retry of it, unique per API key and key. */
export async function idempotentHoldId(keyId: string, idempotencyKey: string): Promise<string> {
  return `hold_idem_${(await sha256(`${keyId}\n${idempotencyKey}`)).slice(0, 32)}`;
}

/** An idempotent request's claim on its key, from the first answer to its recording or release. */
export class IdempotentRequest {
  private renewal: ReturnType<typeof setInterval> | null = null;
  private ended = false;

  private constructor(
    private readonly store: IdempotencyStore,
    private readonly keyId: string,
    readonly key: string,
    private readonly token: string,
  ) {}

  /**
   * Claims the key, or answers for it: the stored response of a completed request (`replay`), or the 409
   * that says why not.
   */
  static async claim(
    store: IdempotencyStore,
    args: { keyId: string; key: string; fingerprint: string },
  ): Promise<{ claimed: IdempotentRequest } | { replay: StoredResponse }> {
    const r = await store.claim({
      keyId: args.keyId,
      idempotencyKey: args.key,
      fingerprint: args.fingerprint,
      leaseMs: IDEMPOTENCY_LEASE_MS,
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    switch (r.status) {
      case 'completed':
        return { replay: r.response };
      case 'mismatch':
        throw new GatewayError(
          409,
          'invalid_request_error',
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request. Use a new key for a new request.',
        );
      case 'in_flight': {
        const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
        throw new GatewayError(
          409,
          'invalid_request_error',
          'idempotency_key_in_use',
          `A request with this Idempotency-Key is still in progress. Retry after it ends (in about ${seconds} s).`,
          null,
          { 'retry-after': String(seconds) },
        );
      }
      case 'claimed': {
        const claimed = new IdempotentRequest(store, args.keyId, args.key, r.token);
        claimed.renewal = setInterval(() => {
          store.renew(args.keyId, args.key, IDEMPOTENCY_LEASE_MS, r.token).catch(() => undefined);
        }, IDEMPOTENCY_LEASE_MS / 3);
        return { claimed };
      }
    }
  }

  /** Keeps the answer for replay. */
  async record(response: StoredResponse): Promise<void> {
    if (!this.finish()) return;
    await withLedgerRetries(() => this.store.complete(this.keyId, this.key, response, this.token), DEFAULT_LEDGER_RETRY_DELAYS_MS);
  }

  /** The request ended without an answer worth replaying: a retry may run it. */
  async release(): Promise<void> {
    if (!this.finish()) return;
    await withLedgerRetries(() => this.store.release(this.keyId, this.key, this.token), DEFAULT_LEDGER_RETRY_DELAYS_MS);
  }

  private finish(): boolean {
    if (this.ended) return false;
    this.ended = true;
    if (this.renewal !== null) clearInterval(this.renewal);
    return true;
  }
}
