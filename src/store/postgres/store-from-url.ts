/**
 * A PostgreSQL store from a database URL, as SVC_DATABASE_URL (Node) or a Hyperdrive connection string
 * (Workers) gives it. Runtime-agnostic.
 */
import type { Clock } from '../../core/clock.js';
import { ConfigError } from '../../config/schema.js';
import type { Store } from '../types.js';
import { createPostgresStore } from './postgres-store.js';

/**
 * The database URL without its `max`, and that `max` (null when absent). Only the query string is parsed:
 * multi-host URLs (`postgres://h1,h2/db`), which the driver accepts, are not valid WHATWG URLs. Throws a
 * ConfigError when `max` is not a positive integer; `what` says what it means to the caller.
 */
export function takeMax(url: string, what: string): { url: string; max: number | null } {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return { url, max: null };
  const params = new URLSearchParams(url.slice(queryStart + 1));
  const max = params.get('max');
  if (max === null) return { url, max: null };
  if (!/^[1-9][0-9]*$/.test(max)) throw new ConfigError(`SVC_DATABASE_URL: max (${what}) must be a positive integer, got '${max}'`);
  params.delete('max');
  const rest = params.toString();
  const base = url.slice(0, queryStart);
  return { url: rest === '' ? base : `${base}?${rest}`, max: Number(max) };
}

/**
 * `max` and `schema` are ours: taken out so the driver does not send them to the server as settings.
 */
export function postgresStoreFromUrl(url: string, clock: Clock, defaults: { max?: number } = {}): Store {
  const withoutMax = takeMax(url, 'the pool size');
  const queryStart = withoutMax.url.indexOf('?');
  const params = new URLSearchParams(queryStart === -1 ? '' : withoutMax.url.slice(queryStart + 1));
  const schema = params.get('schema');
  params.delete('schema');
  const base = queryStart === -1 ? withoutMax.url : withoutMax.url.slice(0, queryStart);
  const rest = params.toString();
  const max = withoutMax.max ?? defaults.max;
  try {
    return createPostgresStore({
      url: rest === '' ? base : `${base}?${rest}`,
      clock,
      ...(max === undefined ? {} : { max }),
      ...(schema === null ? {} : { schema }),
    });
  } catch (error) {
    throw new ConfigError(`SVC_DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
}
