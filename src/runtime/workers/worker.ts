/**
 * The gateway on Cloudflare Workers (workerd): the same app (src/core/app.ts), doors, routing, failover and
 * metering as the Node server, on the PostgreSQL store reached through Hyperdrive (docs/edge.md).
 *
 * What differs from Node, and why:
 * - A Worker may not use one request's I/O objects (sockets) from another request, so each request opens
 *   its own store connection (Hyperdrive pools them near the database) and closes it once its response,
 *   a stream included, has ended. What lives per isolate holds no I/O: the routing table and its circuit
 *   breakers, the rate limiter, the registry of live completions.
 * - Configuration comes from bindings: `SVC_CONFIG` (the config file's content, JSON), provider keys as
 *   secrets named by each provider's `api_key_env`, `SVC_ADMIN_TOKEN` as a secret, and the database as the
 *   `HYPERDRIVE` binding (or `SVC_DATABASE_URL`).
 */
import { systemClock } from '../../core/clock.js';
import type { AppDeps } from '../../core/deps.js';
import { createApp } from '../../core/app.js';
import { CompletionRegistry, type Interruptible } from '../../completions/registry.js';
import { postgresStoreFromUrl, takeMax } from '../../store/postgres/store-from-url.js';
import type { Store } from '../../store/types.js';
import { ConnectionSlots, NO_SLOT, type Slot } from './connection-slots.js';
import { configFromEnv, housekeeping, loggerFromEnv, webDeps } from '../web/web-deps.js';

export interface WorkerEnv {
  /** Hyperdrive's binding: a connection string to its pool in front of the PostgreSQL database. */
  HYPERDRIVE?: { connectionString: string };
  SVC_DATABASE_URL?: string;
  /** The config file's content (JSON text or a JSON var); absent: the built-in sandbox catalog. */
  SVC_CONFIG?: string | Record<string, unknown>;
  SVC_ADMIN_TOKEN?: string;
  SVC_LOG_LEVEL?: string;
  [binding: string]: unknown;
}

export interface WorkerContext {
  waitUntil(work: Promise<unknown>): void;
}

/**
 * Connections one request's store opens: one. A completion's statements run one after another (reserve,
 * renewals, settle), and Hyperdrive pools the connections of all requests in front of the database.
 */
const REQUEST_POOL_SIZE = 1;

let isolate: Omit<AppDeps, 'store'> | null = null;

function isolateOf(env: WorkerEnv): Omit<AppDeps, 'store'> {
  isolate ??= webDeps(configFromEnv(env), env, loggerFromEnv(env), 'disable');
  return isolate;
}

function databaseUrl(env: WorkerEnv): string {
  const url = env.HYPERDRIVE?.connectionString ?? env.SVC_DATABASE_URL;
  if (url === undefined || url === '') throw new Error('no database: bind HYPERDRIVE (or set SVC_DATABASE_URL) to the PostgreSQL database');
  return url;
}

interface Database {
  /** The URL each request's store connects with: without `max`, which is not the request's pool size here. */
  url: string;
  /** The database URL's `max`: how many requests of this isolate may hold a connection at once; null when unset. */
  slots: ConnectionSlots | null;
}

let database: { from: string; value: Database } | null = null;

/** The database of this isolate's requests, read once per URL. */
function databaseOf(env: WorkerEnv): Database {
  const url = databaseUrl(env);
  if (database?.from === url) return database.value;
  const taken = takeMax(url, 'the connections this isolate may hold at once');
  const value = { url: taken.url, slots: taken.max === null ? null : new ConnectionSlots(taken.max) };
  database = { from: url, value };
  return value;
}

/**
 * A request's registry of completions. workerd cancels a request's work when its client goes away, unless
 * that work was handed to `ctx.waitUntil`: from admission on, the request's completion is kept alive that way
 * until it has ended its hold (a hang-up is charged for what the upstream made, at once, not voided by the
 * Cron Trigger a lease later). Work that outlives the response (a settle the ledger did not confirm in line,
 * retried in the background; an idempotency record) is handed over the same way, and the request's store
 * closes only after it.
 */
class RequestRegistry extends CompletionRegistry {
  private readonly work: Promise<unknown>[] = [];
  private ended: (() => void) | null = null;

  constructor(private readonly ctx: WorkerContext) {
    super();
  }

  override admit(): void {
    super.admit();
    if (this.ended === null) this.ctx.waitUntil(new Promise<void>((resolve) => (this.ended = resolve)));
  }

  override abandon(): void {
    super.abandon();
    this.endIfIdle();
  }

  override delete(completion: Interruptible): void {
    super.delete(completion);
    this.endIfIdle();
  }

  override track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined);
    this.work.push(settled);
    this.ctx.waitUntil(settled);
    super.track(work);
    // After the base class counted it done (its reaction to `work` runs before this one's).
    void settled.then(() => this.endIfIdle());
  }

  /** Resolves once every piece of tracked work ended. */
  async workDone(): Promise<void> {
    while (this.work.length > 0) await Promise.all(this.work.splice(0));
  }

  private endIfIdle(): void {
    if (this.size === 0) this.ended?.();
  }
}

/** Closes the request's store, then gives its connection slot back. */
function closeStore(store: Store, slot: Slot): Promise<void> {
  return store.close().finally(() => slot.release());
}

/**
 * The response, whose end (its body's, for a stream) and then its tracked work close the request's store
 * and give its connection slot back. Each chunk that goes out renews the slot's lease, so a stream (its
 * keep-alive comments included) keeps its slot for as long as it runs.
 */
function closingWith(response: Response, store: Store, slot: Slot, registry: RequestRegistry, ctx: WorkerContext): Response {
  const closeAfterWork = (): Promise<void> => registry.workDone().then(() => closeStore(store, slot));
  if (response.body === null) {
    ctx.waitUntil(closeAfterWork());
    return response;
  }
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    ctx.waitUntil(closeAfterWork());
  };
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        slot.touch();
        controller.enqueue(chunk);
      },
      flush: close,
    }),
  );
  // A client that goes away cancels the body instead: the completion still settles (its owner ends the
  // hold), and the runtime closes the request's sockets when the request's work is done. The slot is then
  // not given back; its lease, no longer renewed, frees it (./connection-slots.ts). A body of our own with
  // a cancel callback would give it back at once, but workerd did not cancel such a body when its client
  // left, so the completion was never interrupted (tried: the hang-up test's hold stayed pending).
  return new Response(body, response);
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    const shared = isolateOf(env);
    const db = databaseOf(env);
    const slot = db.slots === null ? NO_SLOT : await db.slots.acquire();
    let store: Store | null = null;
    try {
      store = postgresStoreFromUrl(db.url, systemClock, { max: REQUEST_POOL_SIZE });
      const registry = new RequestRegistry(ctx);
      const app = createApp({ ...shared, store, completions: registry });
      const response = await app.fetch(request, env, ctx as never);
      return closingWith(response, store, slot, registry, ctx);
    } catch (e) {
      if (store === null) slot.release();
      else ctx.waitUntil(closeStore(store, slot));
      throw e;
    }
  },

  /**
   * The Cron Trigger (wrangler.jsonc, every minute): what the Node server's reaper timer does. Holds whose
   * gateway stopped renewing them are voided, expired idempotency records and stored responses deleted.
   */
  async scheduled(_controller: unknown, env: WorkerEnv, ctx: WorkerContext): Promise<void> {
    const shared = isolateOf(env);
    const store = postgresStoreFromUrl(databaseOf(env).url, systemClock, { max: REQUEST_POOL_SIZE });
    const run = async (): Promise<void> => {
      try {
        await housekeeping(store, shared.logger);
      } finally {
        await store.close();
      }
    };
    ctx.waitUntil(run());
  },
};
