/**
 * One exchange at a completion door, as plain values: what the completion pipeline (./completion-door.ts)
 * needs of a request, and the answer it gives back. A runtime serves it from its own objects: Hono's
 * Context (./hono-exchange.ts) on every runtime, and node:http's request and response directly on Node
 * (src/runtime/node/direct-doors.ts), so that the hot routes build no Web Request, Response or stream.
 */
import type { StopSignalLike } from '../core/stop-signal.js';
import type { AppDeps } from '../core/deps.js';
import type { RequestObservation } from '../observability/request-observation.js';
import type { ApiKeyRecord } from '../store/types.js';
import type { ByteSource } from '../streaming/byte-source.js';

export interface DoorRequest {
  readonly deps: AppDeps;
  /** The authenticated key. */
  readonly key: ApiKeyRecord;
  readonly requestId: string;
  readonly observation: RequestObservation | undefined;
  /** A request header by its lowercase name. */
  header(name: string): string | undefined;
  /** The body as text: read on the first call, the same text on every later one. */
  text(): Promise<string>;
  /** Fires when the client goes away. */
  readonly clientSignal: StopSignalLike;
  /**
   * Cuts the client's connection (a runtime capability): an errored stream is not enough on Node, whose
   * writer, blocked on a client that does not read, never reads the error.
   */
  readonly abandonConnection: ((error: Error) => void) | undefined;
}

export type DoorAnswer =
  | { kind: 'body'; status: number; headers: Record<string, string>; body: string }
  | { kind: 'stream'; headers: Record<string, string>; stream: ByteSource };
