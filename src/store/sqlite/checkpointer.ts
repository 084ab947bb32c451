/**
 * WAL checkpoints on a worker thread, off the event loop.
 *
 * Left to itself, SQLite checkpoints inside the commit that pushes the WAL past 1000 pages: that commit
 * copies the WAL back into the database file and fsyncs both, synchronously, on the thread that serves
 * every request. Under load that is every few dozen requests, and it was about half of the store's time
 * per request (bench/profile.mjs, docs/performance.md). Here a second connection, on its own thread, runs a
 * PASSIVE checkpoint every CHECKPOINT_INTERVAL_MS: it never blocks the writer, and the writer restarts the
 * WAL from its beginning once everything in it is checkpointed, so the file stays small.
 *
 * Durability (docs/ledger.md): with synchronous=NORMAL the WAL is fsynced only by a checkpoint, so a commit
 * survives a power loss once the next checkpoint ran: within CHECKPOINT_INTERVAL_MS here, instead of "at the
 * next 1000 pages", which under light load could be hours. The main connection keeps an automatic
 * checkpoint at SAFETY_AUTOCHECKPOINT_PAGES, so the WAL stays bounded even if this thread ever stopped.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export const CHECKPOINT_INTERVAL_MS = 100;
/** Ten times SQLite's default: reached only if the checkpointer falls behind or died. */
export const SAFETY_AUTOCHECKPOINT_PAGES = 10_000;

// Plain CommonJS evaluated by the worker, so it runs the same from src/ (tests) and dist/ (the server).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
let stopped = false;
let timer;
// A failing checkpoint (a full disk) fails every 100 ms: reported when it starts failing or fails otherwise,
// and once when it works again, not ten times a second.
let failing = null;
let failures = 0;
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    if (failing !== null) parentPort.postMessage({ recovered: failures });
    failing = null;
    failures = 0;
  } catch (error) {
    failures += 1;
    if (String(error) !== failing) parentPort.postMessage({ error: String(error) });
    failing = String(error);
  }
};
const tick = () => {
  if (stopped) return;
  checkpoint();
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.once('message', () => {
  stopped = true;
  clearTimeout(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Runs a last checkpoint and ends the thread. */
  stop(): Promise<void>;
}

/**
 * `warn` hears a checkpoint that starts failing (or fails otherwise than before), and the first that works
 * again after failures, with how many failed: a full disk must not write a warning every 100 ms.
 */
export function startCheckpointer(path: string, busyTimeoutMs: number, warn: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('libsql');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, busyTimeoutMs, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  // A CLI command that opened the store must still exit when it is done.
  worker.unref();
  worker.on('message', (m: { error?: string; recovered?: number }) => {
    if (m.error !== undefined) warn(`SQLite WAL checkpoint failed (reported again only if it fails otherwise): ${m.error}`);
    if (m.recovered !== undefined) warn(`SQLite WAL checkpoint works again, after ${m.recovered} failed ones`);
  });
  worker.on('error', (e) => warn(`SQLite WAL checkpointer stopped: ${e instanceof Error ? e.message : String(e)}`));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= (async () => {
        // Held again while it finishes: an unreferenced worker would let the process exit under this await.
        worker.ref();
        worker.postMessage('stop');
        const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), busyTimeoutMs).unref());
        if ((await Promise.race([exited, timeout])) === 'timeout') await worker.terminate();
      })();
      return stopping;
    },
  };
}
