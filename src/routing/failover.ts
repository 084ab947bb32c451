/**
 * Tries a route's targets in order until one accepts the call. Only failures another target might not
 * have (connection, timeout, 5xx, 429, auth or model errors of that provider) move on; a request the
 * upstream judged malformed (400/413/422) would fail everywhere and is answered at once.
 * Health (circuit breakers, latency) and mid-stream continuation arrive with issue 4.
 */
import { UpstreamError } from '../providers/contract.js';
import type { Target } from './router.js';

export interface Attempt {
  provider: string;
  model: string;
  outcome: string;
}

export class AllTargetsFailed extends Error {
  constructor(
    readonly last: UpstreamError,
    readonly attempts: Attempt[],
  ) {
    super(last.message);
    this.name = 'AllTargetsFailed';
  }
}

function tryNext(e: UpstreamError): boolean {
  if (e.kind === 'aborted') return false;
  if (e.kind === 'http') return !(e.status === 400 || e.status === 413 || e.status === 422);
  return true;
}

export function asUpstreamError(e: unknown): UpstreamError {
  if (e instanceof UpstreamError) return e;
  return new UpstreamError('protocol', e instanceof Error ? e.message : String(e));
}

function outcomeOf(e: UpstreamError): string {
  return e.kind === 'http' ? `http_${e.status}` : e.kind;
}

export async function firstAccepting<T>(
  targets: readonly Target[],
  start: (target: Target) => Promise<T>,
): Promise<{ value: T; target: Target; attempts: Attempt[] }> {
  const attempts: Attempt[] = [];
  let last: UpstreamError | null = null;
  for (const target of targets) {
    try {
      const value = await start(target);
      attempts.push({ provider: target.adapter.name, model: target.model, outcome: 'ok' });
      return { value, target, attempts };
    } catch (raw) {
      const e = asUpstreamError(raw);
      attempts.push({ provider: target.adapter.name, model: target.model, outcome: outcomeOf(e) });
      last = e;
      if (!tryNext(e)) break;
    }
  }
  throw new AllTargetsFailed(last ?? new UpstreamError('connect', 'no upstream target is configured'), attempts);
}
