/**
 * Readiness (GET /readyz): whether this instance should receive traffic. Not while it drains (shutdown
 * began), nor while its store does not answer. Migrations are applied before the gateway listens, so
 * a store that answers a query on its tables has its schema. Runtime-agnostic.
 */
import type { CompletionRegistry } from '../completions/registry.js';
import type { Store } from '../store/types.js';
import type { Readiness } from './telemetry.js';

/** A store that takes longer than this to answer a primary-key read is not ready to serve requests. */
const STORE_CHECK_TIMEOUT_MS = 1_000;

/** Never a real key id (ids are `key_` + base62): the read finds nothing, and proves the table answers. */
const PROBE_KEY_ID = 'key_readiness_probe';

export async function checkReadiness(store: Store, completions: CompletionRegistry): Promise<Readiness> {
  const draining = completions.isDraining;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const storeOk = await Promise.race([
    store.keys.findKey(PROBE_KEY_ID).then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), STORE_CHECK_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  return {
    ready: storeOk && !draining,
    checks: { store: storeOk ? 'ok' : 'failed', draining: draining ? 'draining' : 'ok' },
  };
}
