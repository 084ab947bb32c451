import { describe } from 'vitest';
import { expiryCases } from './cases/expiry.case.js';
import { grantCases } from './cases/grants.case.js';
import type { OpenStore } from './cases/harness.js';
import { idempotencyCases } from './cases/idempotency.case.js';
import { keyFamilyCases } from './cases/key-family.case.js';
import { keyCases } from './cases/keys.case.js';
import { propertyCases } from './cases/property.case.js';
import { renewCases } from './cases/renew.case.js';
import { reserveCases } from './cases/reserve.case.js';
import { responseCases } from './cases/responses.case.js';
import { settleCases } from './cases/settle.case.js';
import { usageEventCases } from './cases/usage-events.case.js';
import { usageCases } from './cases/usage.case.js';

export type { OpenStore, StoreHarness } from './cases/harness.js';

/**
 * The Store contract, run by every implementation. It talks to the store only through the Store
 * interface, so the same cases hold SQLite and PostgreSQL to the same behaviour.
 * `open` returns an empty store that is not yet migrated (the suite migrates it) and a clock the suite
 * moves by hand; `close` releases everything the store holds (files, connections, schemas).
 */
export function runStoreConformance(name: string, open: OpenStore): void {
  describe(`Store conformance: ${name}`, () => {
    keyCases(open);
    keyFamilyCases(open);
    grantCases(open);
    reserveCases(open);
    settleCases(open);
    renewCases(open);
    expiryCases(open);
    usageCases(open);
    usageEventCases(open);
    idempotencyCases(open);
    responseCases(open);
    propertyCases(open);
  });
}
