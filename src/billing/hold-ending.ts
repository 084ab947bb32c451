/**
 * Ending a hold when the ledger may be away: the meter's in-line retries first; if the ledger is still
 * unreachable, null now (the answer says `settlement: "pending"`), and the same idempotent ending retried in
 * the background, renewing the lease meanwhile, until it lands or the lease could have run out. The registry
 * tracks the retries, so shutdown waits for them. Shared by every owner of a hold (completions, embeddings).
 */
import type { Logger } from '../core/logger.js';
import { StoreError } from '../store/errors.js';
import type { Meter, MeterOutcome } from './meter.js';

export interface HoldEndingDeps {
  logger: Logger;
  registry: { track(work: Promise<unknown>): void };
  holdLeaseMs: number;
}

export function endUntilLedgerAnswers(
  deps: HoldEndingDeps,
  meter: Meter,
  requestId: string,
  end: () => Promise<MeterOutcome>,
): Promise<MeterOutcome | null> {
  // A `catch` on the ending, not an async function around an await: this is on every request's path.
  return end().catch((e: unknown) => {
    if (!(e instanceof StoreError && e.code === 'unavailable')) throw e;
    deps.registry.track(retryInBackground(deps, meter, requestId, end, e));
    return null;
  });
}

/** What kept the ledger from answering, as the log says it: an outage, or a database that ended the transaction. */
function absence(e: StoreError): string {
  return e.contention ? 'ledger busy (a transaction ended for contention)' : 'ledger unreachable';
}

async function retryInBackground(
  deps: HoldEndingDeps,
  meter: Meter,
  requestId: string,
  end: () => Promise<MeterOutcome>,
  first: StoreError,
): Promise<void> {
  const holdId = meter.holdId;
  deps.logger.warn(`${absence(first)} at the end of a completion; retrying in the background`, { requestId, holdId, error: first.message });
  const giveUpAt = performance.now() + (deps.holdLeaseMs * 2) / 3;
  let last = first;
  // Short waits: the hold's lease keeps running while the database is away, so the ending must land soon
  // after it is back.
  for (let delay = 500; performance.now() < giveUpAt; delay = Math.min(delay * 2, 5_000)) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    try {
      await meter.renew().catch(() => false);
      await end();
      deps.logger.info('hold ended after the ledger came back', { requestId, holdId });
      return;
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 'unavailable')) {
        deps.logger.error('hold could not be ended', { requestId, holdId, error: String(e) });
        return;
      }
      last = e;
    }
  }
  deps.logger.error(`${absence(last)} for the whole lease: the reaper will void the hold`, { requestId, holdId, error: last.message });
}
