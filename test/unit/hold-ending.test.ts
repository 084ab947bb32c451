import { describe, expect, it } from 'vitest';
import { endUntilLedgerAnswers } from '../../src/billing/hold-ending.js';
import type { Meter, MeterOutcome } from '../../src/billing/meter.js';
import { StoreError } from '../../src/store/errors.js';
import { recordingLogger } from '../helpers/recording-logger.js';

/** The two things the background retry asks of a meter. */
const meter = { holdId: 'hold_1', renew: () => Promise.resolve(true) } as unknown as Meter;
const settled = { charged: 5 } as unknown as MeterOutcome;

async function run(failures: StoreError[], holdLeaseMs: number): Promise<{ first: MeterOutcome | null; lines: [string, string][] }> {
  const logger = recordingLogger();
  const retries: Promise<unknown>[] = [];
  let calls = 0;
  const end = (): Promise<MeterOutcome> => {
    const failure = failures[calls++];
    return failure === undefined ? Promise.resolve(settled) : Promise.reject(failure);
  };
  const first = await endUntilLedgerAnswers({ logger, registry: { track: (w) => void retries.push(w) }, holdLeaseMs }, meter, 'req_1', end);
  await Promise.all(retries);
  return { first, lines: logger.lines };
}

describe('ending a hold while the ledger cannot answer', () => {
  const outage = (): StoreError => new StoreError('unavailable', 'PostgreSQL is unreachable: ECONNREFUSED');
  const contention = (): StoreError => new StoreError('unavailable', 'PostgreSQL ended the transaction: deadlock detected', true);

  it('answers pending now and ends the hold in the background, saying an outage is an outage', async () => {
    const { first, lines } = await run([outage()], 60_000);
    expect(first).toBeNull();
    expect(lines).toEqual([
      ['warn', 'ledger unreachable at the end of a completion; retrying in the background'],
      ['info', 'hold ended after the ledger came back'],
    ]);
  });

  it('says a transaction the database ended for contention is contention, not an outage', async () => {
    const { lines } = await run([contention()], 60_000);
    expect(lines[0]).toEqual(['warn', 'ledger busy (a transaction ended for contention) at the end of a completion; retrying in the background']);
  });

  it('names what kept it from answering last when it gives up to the reaper', async () => {
    const { lines } = await run([outage(), contention()], 600);
    expect(lines).toEqual([
      ['warn', 'ledger unreachable at the end of a completion; retrying in the background'],
      ['error', 'ledger busy (a transaction ended for contention) for the whole lease: the reaper will void the hold'],
    ]);
  });
});
