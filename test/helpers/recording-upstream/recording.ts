/** What the recording upstreams keep of each request they got, and what they answered it. */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { writeInPieces } from '../../providers/helpers/fixture-server.js';
import type { Plan } from './answer-plan.js';

export type UpstreamKind = 'openai' | 'anthropic' | 'gemini';

/** An upstream's token counts in OpenAI's terms: what a gateway relaying them faithfully reports. */
export interface ExpectedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Of the prompt, read from the provider's cache. */
  cached_tokens: number;
  /** Of the completion, spent reasoning. */
  reasoning_tokens: number;
}

export interface Reply {
  status: number;
  /** For a refusal: the provider's error body. */
  error?: unknown;
  plan?: Plan;
  /** The answer's text (for a tool call, null). */
  text?: string | null;
  /** The thinking the answer carried, when the request asked for it to be shown. */
  reasoningText?: string | null;
  toolCall?: { id: string; name: string; args: Record<string, unknown> };
  usage?: ExpectedUsage;
  /**
   * OpenAI-compatible upstreams: `choices[0].logprobs` of the whole answer as sent (streamed: the chunks'
   * `content` entries joined, in order); null when the request did not ask for logprobs or the answer is a
   * tool call.
   */
  logprobs?: WireLogprobs | null;
  /** Streamed with logprobs: each chunk's `choices[0].logprobs` that was not null, in the order sent. */
  chunkLogprobs?: WireLogprobs[];
  /** OpenAI-compatible upstreams: `system_fingerprint` and `service_tier` as sent (on every chunk when streamed). */
  systemFingerprint?: string;
  serviceTier?: string;
}

/** One token of OpenAI's `choices[].logprobs.content`. */
export interface WireTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/** OpenAI's `choices[].logprobs`. */
export interface WireLogprobs {
  content: WireTokenLogprob[] | null;
  refusal: WireTokenLogprob[] | null;
}

export interface Recorded {
  kind: UpstreamKind;
  method: string;
  /** Path and query as received. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Whether the answer was sent as a stream. */
  stream: boolean;
  reply: Reply;
}

export class Recording {
  readonly all: Recorded[] = [];

  /** A position to read later requests from. */
  mark(): number {
    return this.all.length;
  }

  /** Requests recorded after `mark`, of one kind or of all. */
  since(mark: number, kind?: UpstreamKind): Recorded[] {
    return this.all.slice(mark).filter((r) => kind === undefined || r.kind === kind);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Sends SSE text in odd-sized pieces, as a network would deliver it. */
export async function sendSse(res: ServerResponse, text: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  await writeInPieces(res, text);
  res.end();
}

/** A rough token count of a request, stable for a given body: what the upstreams report as the prompt. */
export function promptTokensOf(raw: string): number {
  return Math.max(1, Math.ceil(raw.length / 4));
}

/** Output tokens of an answer: one per streamed piece of text, or a quarter of a tool call's JSON. */
export function outputTokensOf(plan: Plan, pieceCount: number): number {
  return plan.kind === 'text' ? pieceCount : Math.ceil(JSON.stringify(plan.args).length / 4) + 5;
}
