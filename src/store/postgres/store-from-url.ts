/**
 * A PostgreSQL store from a database URL, as SVC_DATABASE_URL (Node) or a Hyperdrive connection string
 * (Workers) gives it. Runtime-agnostic.
 */
import type { Clock } from '../../core/clock.js';
import { ConfigError } from '../../config/schema.js';
import type { Store } from '../types.js';
import { createPostgresStore } from './postgres-store.js';

/**
 * `max` and `schema` are ours: taken out so the driver does not send them to the server as settings. Only
 * the query string is parsed here: multi-host URLs (`postgres://h1,h2/db`), which the driver accepts, are
 * not valid WHATWG URLs.
 */
export function postgresStoreFromUrl(url: string, clock: Clock, defaults: { max?: number } = {}): Store {
  const queryStart = url.indexOf('?');
  const params = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
  const max = params.get('max');
  const schema = params.get('schema');
  params.delete('max');
  params.delete('schema');
  if (max !== null && !/^[1-9][0-9]*$/.test(max)) {
    throw new ConfigError(`SVC_DATABASE_URL: max (the pool size) must be a positive integer, got '${max}'`);
  }
  const base = queryStart === -1 ? url : url.slice(0, queryStart);
  const rest = params.toString();
  try {
    return createPostgresStore({
      url: rest === '' ? base : `${base}?${rest}`,
      clock,
      ...(max === null ? (defaults.max === undefined ? {} : { max: defaults.max }) : { max: Number(max) }),
      ...(schema === null ? {} : { schema }),
    });
  } catch (error) {
    throw new ConfigError(`SVC_DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
}
