import { describe, expect, it } from 'vitest';
import { asGatewayError } from '../../src/http/middleware/errors.js';
import { StoreError } from '../../src/store/errors.js';
import { recordingLogger } from '../helpers/recording-logger.js';

describe('a store that cannot answer now', () => {
  it('is a 503 to retry; an outage is a warning, a transaction ended for contention an error', () => {
    const outage = recordingLogger();
    const answer = asGatewayError(new StoreError('unavailable', 'PostgreSQL is unreachable: ECONNREFUSED'), outage, 'req_1');
    expect(answer).toMatchObject({ status: 503, code: 'store_unavailable', headers: { 'retry-after': '1' } });
    expect(outage.lines).toEqual([['warn', 'store unavailable']]);
    expect(answer.message).toBe('The credit ledger is unreachable right now. Retry shortly.');

    const contention = recordingLogger();
    const ended = asGatewayError(new StoreError('unavailable', 'PostgreSQL ended the transaction: deadlock detected', true), contention, 'req_2');
    expect(ended).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(contention.lines).toEqual([['error', 'store ended a transaction for contention']]);
    // The database is there: the answer must not send an operator looking for an outage.
    expect(ended.message).toBe('The credit ledger was too busy to finish this request (contention). Retry shortly.');
  });
});
