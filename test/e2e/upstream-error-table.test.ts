/**
 * docs/errors.md, "Upstream failures", one row at a time, end to end: a real gateway (SQLite file) whose
 * alias targets are real HTTP upstreams (node:http, scripted per case) speaking OpenAI's, Anthropic's or
 * Gemini's wire format. Each case is named after the table row it checks; the row's cell text is the case
 * name's prefix, so a failure points at the line of the doc it contradicts.
 *
 * For every row: the client's status, `error.type`, `error.code`, `error.param`, the `retry-after`,
 * `retry-after-ms` and `x-should-retry` headers, which targets were called (failover goes on or stops, as the
 * row says), and the books: a refused request whose upstreams all refused leaves the balance untouched and
 * no hold pending (docs/errors.md: "An upstream failure voids the hold when no upstream accepted the call").
 *
 * Every case runs for a non-streaming and a streaming client: before any upstream accepted, a streaming
 * client gets the same HTTP error (src/completions/streaming.ts: no stream starts until a target accepts).
 *
 * The file also checks itself against the doc ("this file and docs/errors.md agree", at the end): the table is
 * parsed from docs/errors.md, every row must have cases here and every case a row, each case's upstream
 * failure (its status, error type or code, or failure class, as each scripted upstream declares it with
 * `says`) must be one the row's first column names, and each error a case ends with (status, code,
 * x-should-retry) one the row's other columns name.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type GatewayConfig } from '../../src/config/schema.js';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { sseChunk } from '../helpers/openai-sse.js';
import { closedPort, fixture, sseHead, startFixtureServer, type FixtureServer, type Scenario } from '../providers/helpers/fixture-server.js';

// The cells of the doc table's first column: each case name starts with one, so `-t` can pick a row.
const ROW = {
  refused: '400, 413 or 422 about the request itself',
  unsupported: '400 naming a parameter this model does not take',
  rateLimited: '429 rate limit',
  quota: '429 insufficient_quota, Anthropic billing_error or its 400 "credit balance is too low"',
  unavailable: 'connection refused or reset, 503, 529 (overloaded)',
  timeout: 'no first token, a stall, or the total deadline passed',
  other: "any other status (500, 502, 401 of a bad upstream key, Gemini's 400 API_KEY_INVALID ...), a malformed answer",
} as const;

type Wire = 'openai' | 'anthropic' | 'gemini';

/** One target of the alias: the wire it speaks and how its upstream behaves (`refused`: nothing listens). */
type Upstream = { wire: Wire; answer: Scenario } | { wire: Wire; refused: true };

interface ErrorAnswer {
  status: number;
  type: string;
  code: string;
  param?: string | null;
  /** Expected header values; null: the header must be absent. */
  retryAfter?: string | null;
  retryAfterMs?: string | null;
  shouldRetry: 'true' | 'false';
}

interface Case {
  row: string;
  variant: string;
  targets: Upstream[];
  /** A number: that target (index) answers 200. */
  expect: ErrorAnswer | { servedBy: number };
  /** Requests each scripted target received (null for a refused port, which records nothing). */
  calls: (number | null)[];
  /**
   * An upstream answered 2xx before failing (a stall, a malformed body). From then on the provider bills the
   * operator, so the doc charges the prompt "also on an error", and a streaming client already got its 200
   * (docs/errors.md, "Errors inside a stream"): such a case runs for non-streaming clients only, and asserts a
   * charge instead of an unchanged balance.
   */
  accepted?: true;
  server?: Record<string, number>;
}

// ---- upstream answers, in each provider's own words --------------------------------------------------

/**
 * What a scripted upstream says, in the terms of the doc table's first column: its HTTP status (null when it
 * sends none), and the words that class its failure (an error type or code, `reset`, `stall` ...).
 */
interface Said {
  status: number | null;
  words: string[];
  /** The error code its body names, which the first row passes on. */
  code: string | null;
}

const SAID = new WeakMap<Scenario, Said>();

/** Declares what `scenario` says (for the doc check at the end of this file). */
function says(scenario: Scenario, status: number | null, words: (string | null | undefined)[] = [], code: string | null = null): Scenario {
  SAID.set(scenario, { status, words: words.filter((w): w is string => typeof w === 'string' && w.length > 0), code });
  return scenario;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** OpenAI's error envelope (also what vLLM, Groq, OpenRouter send). */
const openaiError = (
  status: number,
  error: { message: string; type?: string; param?: string | null; code?: string | null },
  headers: Record<string, string> = {},
): Scenario =>
  says(
    (_req, res) => sendJson(res, status, { error: { type: 'invalid_request_error', param: null, code: null, ...error } }, headers),
    status,
    [error.code, error.type],
    error.code ?? null,
  );

const anthropicError = (status: number, type: string, message: string, headers: Record<string, string> = {}): Scenario =>
  says((_req, res) => sendJson(res, status, { type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' }, headers), status, [type]);

const geminiError = (code: number, status: string, message: string, details: unknown[] = []): Scenario =>
  says(
    (_req, res) => sendJson(res, code, { error: { code, message, status, ...(details.length > 0 ? { details } : {}) } }),
    code,
    [status, ...details.map((d) => (d as { reason?: string }).reason)],
  );

/** google.rpc.RetryInfo, as Gemini puts it in a 429's details. */
const retryInfo = (retryDelay: string) => ({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay });

const RATE_LIMIT = { message: 'Rate limit reached for gpt-4o-mini on requests per min (RPM).', type: 'requests', code: 'rate_limit_exceeded' };
const QUOTA = {
  message: 'You exceeded your current quota, please check your plan and billing details.',
  type: 'insufficient_quota',
  code: 'insufficient_quota',
};
const UNSUPPORTED_TEMPERATURE = {
  message: "Unsupported parameter: 'temperature' is not supported with this model.",
  param: 'temperature',
  code: 'unsupported_parameter',
};

/** A whole OpenAI SSE answer: the upstream streams even for a non-streaming client. */
const openaiOk: Scenario = says((_req, res) => {
  sseHead(res);
  res.write(sseChunk({ role: 'assistant', content: '' }));
  for (const w of ['Paris', ' is', ' the', ' capital.']) res.write(sseChunk({ content: w }));
  res.write(sseChunk({}, 'stop'));
  res.write(sseChunk({}, null, { prompt_tokens: 14, completion_tokens: 4 }));
  res.end('data: [DONE]\n\n');
}, 200);
const ANTHROPIC_STREAM = fixture('stream-text.sse', 'anthropic');
const anthropicOk: Scenario = says((_req, res) => {
  sseHead(res);
  res.end(ANTHROPIC_STREAM);
}, 200);

/** Drops the connection without a status line. */
const reset: Scenario = says((req) => {
  req.socket.destroy();
}, null, ['reset']);
/** Never answers: the connect deadline (no status, no first token) fires. */
const silent: Scenario = says(() => undefined, null, ['no first token']);
/** Accepts (200), sends one word, then nothing: the stall deadline fires after the upstream was billed. */
const stall: Scenario = says((_req, res) => {
  sseHead(res);
  res.write(sseChunk({ role: 'assistant', content: 'Paris' }));
}, null, ['stall']);
/** Accepts (200), then a chunk that is not JSON. */
const malformed: Scenario = says((_req, res) => {
  sseHead(res);
  res.end('data: {"id": "up-1", "choices": [\n\n');
}, null, ['malformed']);

const oa = (answer: Scenario): Upstream => ({ wire: 'openai', answer });
const an = (answer: Scenario): Upstream => ({ wire: 'anthropic', answer });
const gm = (answer: Scenario): Upstream => ({ wire: 'gemini', answer });
const refused: Upstream = { wire: 'openai', refused: true };

// ---- the table ----------------------------------------------------------------------------------------

const CASES: Case[] = [
  // Row 1: the request itself is at fault; every target would say the same, so failover stops.
  {
    row: ROW.refused,
    variant: 'OpenAI 400 context_length_exceeded keeps its code and param; the second target is not called',
    targets: [
      oa(
        openaiError(400, {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.",
          param: 'messages',
          code: 'context_length_exceeded',
        }),
      ),
      oa(openaiOk),
    ],
    expect: { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages', shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'OpenAI 400 invalid_value keeps its code and param',
    targets: [oa(openaiError(400, { message: "Invalid value for 'max_tokens': must be a positive integer.", param: 'max_tokens', code: 'invalid_value' })), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'max_tokens', shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'OpenAI 400 without a code is upstream_rejected_request',
    targets: [oa(openaiError(400, { message: "'messages' must contain the word 'json' in some form." })), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', param: null, shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: '413 (a plain-text body) is upstream_rejected_request',
    targets: [oa(says((_req, res) => void res.writeHead(413, { 'content-type': 'text/plain' }).end('Request Entity Too Large'), 413)), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', param: null, shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: '422 (a FastAPI validation body) is upstream_rejected_request',
    targets: [oa(says((_req, res) => sendJson(res, 422, { detail: [{ loc: ['body', 'messages'], msg: 'field required', type: 'value_error.missing' }] }), 422)), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', param: null, shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'Anthropic 400 "prompt is too long" is context_length_exceeded on messages',
    targets: [an(anthropicError(400, 'invalid_request_error', 'prompt is too long: 215439 tokens > 200000 maximum')), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages', shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'Anthropic 400 invalid_request_error without a known cause is upstream_rejected_request',
    targets: [an(anthropicError(400, 'invalid_request_error', 'messages: roles must alternate between "user" and "assistant"')), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', param: null, shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'Anthropic 413 request_too_large is upstream_rejected_request',
    targets: [an(anthropicError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.')), oa(openaiOk)],
    expect: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', param: null, shouldRetry: 'false' },
    calls: [1, 0],
  },
  {
    row: ROW.refused,
    variant: 'Gemini 400 INVALID_ARGUMENT "input token count exceeds" is context_length_exceeded on messages',
    targets: [
      gm(geminiError(400, 'INVALID_ARGUMENT', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).')),
      oa(openaiOk),
    ],
    expect: { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages', shouldRetry: 'false' },
    calls: [1, 0],
  },

  // Row 2: a 400 about this target only; another target may take the same request.
  {
    row: ROW.unsupported,
    variant: 'OpenAI 400 unsupported_parameter, then a target that answers: 200',
    targets: [oa(openaiError(400, UNSUPPORTED_TEMPERATURE)), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.unsupported,
    variant: 'OpenAI 400 unsupported_parameter on every target: 400 unsupported_parameter naming the param',
    targets: [oa(openaiError(400, UNSUPPORTED_TEMPERATURE)), oa(openaiError(400, UNSUPPORTED_TEMPERATURE))],
    expect: { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'temperature', shouldRetry: 'false' },
    calls: [1, 1],
  },
  {
    row: ROW.unsupported,
    variant: 'OpenAI 400 that only says "does not support" (no code) on every target: 400 unsupported_parameter',
    targets: [
      oa(openaiError(400, { message: 'This model does not support the temperature parameter.' })),
      oa(openaiError(400, { message: 'This model does not support the temperature parameter.' })),
    ],
    expect: { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: null, shouldRetry: 'false' },
    calls: [1, 1],
  },
  {
    row: ROW.unsupported,
    variant: 'Anthropic 400 "cannot both be specified for this model", then a target that answers: 200',
    targets: [an(anthropicError(400, 'invalid_request_error', '`temperature` and `top_p` cannot both be specified for this model. Please use only one.')), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.unsupported,
    variant: 'Anthropic 400 "Extra inputs are not permitted" alone: 400 unsupported_parameter naming the field',
    targets: [an(anthropicError(400, 'invalid_request_error', 'temperature: Extra inputs are not permitted'))],
    expect: { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'temperature', shouldRetry: 'false' },
    calls: [1],
  },
  {
    row: ROW.unsupported,
    variant: 'Gemini 400 "is not enabled for models/..." alone: 400 unsupported_parameter',
    targets: [gm(geminiError(400, 'INVALID_ARGUMENT', 'Function calling is not enabled for models/gemma-3-27b-it'))],
    expect: { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: null, shouldRetry: 'false' },
    calls: [1],
  },

  // Row 3: rate limited; the shortest wait any upstream named is passed on, else 1 s.
  {
    row: ROW.rateLimited,
    variant: 'OpenAI 429 on the first target, 200 on the second: 200',
    targets: [oa(openaiError(429, RATE_LIMIT, { 'retry-after-ms': '1500' })), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.rateLimited,
    variant: 'every target 429: the shortest wait (retry-after 7 s vs retry-after-ms 2500) is passed on',
    targets: [oa(openaiError(429, RATE_LIMIT, { 'retry-after': '7' })), oa(openaiError(429, RATE_LIMIT, { 'retry-after-ms': '2500' }))],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '3', retryAfterMs: '2500', shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.rateLimited,
    variant: 'every target 429 without a wait: 1 s',
    targets: [oa(openaiError(429, RATE_LIMIT)), oa(openaiError(429, RATE_LIMIT))],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '1', retryAfterMs: '1000', shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.rateLimited,
    variant: "Gemini 429 RetryInfo retryDelay 34s beats OpenAI's retry-after 60",
    targets: [
      gm(geminiError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [retryInfo('34s')])),
      oa(openaiError(429, RATE_LIMIT, { 'retry-after': '60' })),
    ],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '34', retryAfterMs: '34000', shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.rateLimited,
    variant: 'Gemini 429 RetryInfo retryDelay 0.250s alone: retry-after 1 (whole seconds), retry-after-ms 250',
    targets: [gm(geminiError(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', [retryInfo('0.250s')]))],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '1', retryAfterMs: '250', shouldRetry: 'true' },
    calls: [1],
  },
  {
    row: ROW.rateLimited,
    variant: 'Anthropic 429 rate_limit_error with retry-after 4',
    targets: [an(anthropicError(429, 'rate_limit_error', 'This request would exceed the rate limit for your organization.', { 'retry-after': '4' }))],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '4', retryAfterMs: '4000', shouldRetry: 'true' },
    calls: [1],
  },
  {
    row: ROW.rateLimited,
    variant: 'the last target that could serve was limiting (the other refused a parameter): 429',
    targets: [oa(openaiError(429, RATE_LIMIT, { 'retry-after': '2' })), oa(openaiError(400, UNSUPPORTED_TEMPERATURE))],
    expect: { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', param: null, retryAfter: '2', retryAfterMs: '2000', shouldRetry: 'true' },
    calls: [1, 1],
  },

  // Row 4: the operator's upstream account is empty; no client retry helps.
  {
    row: ROW.quota,
    variant: 'OpenAI 429 insufficient_quota, then a target that answers: 200',
    targets: [oa(openaiError(429, QUOTA)), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.quota,
    variant: 'OpenAI 429 insufficient_quota on every target (one naming a wait): 503 upstream_unavailable, no retry-after',
    targets: [oa(openaiError(429, QUOTA, { 'retry-after': '20' })), oa(openaiError(429, QUOTA))],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'false' },
    calls: [1, 1],
  },
  {
    row: ROW.quota,
    variant: 'Anthropic 402 billing_error, then a target that answers: 200',
    targets: [an(anthropicError(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.')), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.quota,
    // What an empty Anthropic account really answers: a 400 invalid_request_error that is not about the request.
    variant: 'Anthropic 400 "credit balance is too low", then a target that answers: 200',
    targets: [an(anthropicError(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.')), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.quota,
    variant: 'Anthropic 400 "credit balance is too low" alone: 503 upstream_unavailable, not the client\'s fault',
    targets: [an(anthropicError(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API.'))],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'false' },
    calls: [1],
  },
  {
    row: ROW.quota,
    variant: 'Anthropic 402 billing_error alone: 503 upstream_unavailable',
    targets: [an(anthropicError(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.'))],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'false' },
    calls: [1],
  },

  // Row 5: nobody could take the call right now.
  {
    row: ROW.unavailable,
    variant: 'connection refused, then a target that answers: 200',
    targets: [refused, oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [null, 1],
  },
  {
    row: ROW.unavailable,
    variant: 'connection refused, then reset: 503 without retry-after',
    targets: [refused, oa(reset)],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [null, 1],
  },
  {
    row: ROW.unavailable,
    variant: 'a 503 naming retry-after 5, then connection refused: 503 with the 503\'s wait',
    targets: [oa(openaiError(503, { message: 'The engine is currently overloaded.', type: 'server_error' }, { 'retry-after': '5' })), refused],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: '5', retryAfterMs: '5000', shouldRetry: 'true' },
    calls: [1, null],
  },
  {
    row: ROW.unavailable,
    variant: 'Anthropic 529 overloaded_error on every target: 503 without retry-after',
    targets: [an(anthropicError(529, 'overloaded_error', 'Overloaded')), an(anthropicError(529, 'overloaded_error', 'Overloaded'))],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.unavailable,
    variant: 'Anthropic 529 overloaded_error, then another Anthropic target that answers: 200',
    targets: [an(anthropicError(529, 'overloaded_error', 'Overloaded')), an(anthropicOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.unavailable,
    variant: 'Gemini 503 UNAVAILABLE alone: 503',
    targets: [gm(geminiError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'))],
    expect: { status: 503, type: 'server_error', code: 'upstream_unavailable', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1],
  },

  // Row 6: deadlines (TIMEOUTS below: 400 ms each).
  {
    row: ROW.timeout,
    variant: 'no answer from the first target, the second answers: 200',
    targets: [oa(silent), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.timeout,
    variant: 'no answer from any target: 504 upstream_timeout',
    targets: [oa(silent), an(silent)],
    expect: { status: 504, type: 'server_error', code: 'upstream_timeout', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.timeout,
    variant: 'the request deadline passed on the first target: 504, the second is not called',
    targets: [oa(silent), oa(openaiOk)],
    // The request deadline (300 ms) comes before the target's connect deadline (400 ms).
    server: { request_timeout_ms: 300 },
    expect: { status: 504, type: 'server_error', code: 'upstream_timeout', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 0],
  },
  {
    row: ROW.timeout,
    variant: 'every target stalls after its first word: 504 upstream_timeout',
    targets: [oa(stall), oa(stall)],
    expect: { status: 504, type: 'server_error', code: 'upstream_timeout', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
    accepted: true,
  },

  // Row 7: everything else.
  {
    row: ROW.other,
    variant: 'OpenAI 500, then a target that answers: 200',
    targets: [oa(openaiError(500, { message: 'The server had an error while processing your request.', type: 'server_error' })), oa(openaiOk)],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.other,
    variant: 'a 401 of a bad upstream key, then a 502: 502 upstream_error',
    targets: [
      oa(openaiError(401, { message: 'Incorrect API key provided: sk-proj-****.', code: 'invalid_api_key' })),
      oa(says((_req, res) => void res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>'), 502)),
    ],
    expect: { status: 502, type: 'server_error', code: 'upstream_error', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.other,
    variant: 'a 429 then a 500: the last target decides, 502',
    targets: [oa(openaiError(429, RATE_LIMIT, { 'retry-after': '3' })), oa(openaiError(500, { message: 'boom', type: 'server_error' }))],
    expect: { status: 502, type: 'server_error', code: 'upstream_error', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.other,
    variant: 'Anthropic 500 api_error, then Anthropic 404 not_found_error: 502',
    targets: [an(anthropicError(500, 'api_error', 'Internal server error')), an(anthropicError(404, 'not_found_error', 'model: claude-haiku-4-5'))],
    expect: { status: 502, type: 'server_error', code: 'upstream_error', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
  },
  {
    row: ROW.other,
    variant: 'Gemini 500 INTERNAL alone: 502',
    targets: [gm(geminiError(500, 'INTERNAL', 'An internal error has occurred.'))],
    expect: { status: 502, type: 'server_error', code: 'upstream_error', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1],
  },
  {
    row: ROW.other,
    // Gemini says "bad upstream key" with a 400 INVALID_ARGUMENT (ErrorInfo reason API_KEY_INVALID), not a
    // 401: the operator's key is at fault, not the request, so it belongs to this row, not the first.
    variant: 'Gemini 400 API_KEY_INVALID (its bad upstream key), then a target that answers: 200',
    targets: [
      gm(
        geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
        ]),
      ),
      oa(openaiOk),
    ],
    expect: { servedBy: 1 },
    calls: [1, 1],
  },
  {
    row: ROW.other,
    variant: 'a malformed answer on every target: 502 upstream_error',
    targets: [oa(malformed), oa(malformed)],
    expect: { status: 502, type: 'server_error', code: 'upstream_error', param: null, retryAfter: null, retryAfterMs: null, shouldRetry: 'true' },
    calls: [1, 1],
    accepted: true,
  },
];

// ---- the harness --------------------------------------------------------------------------------------

/** Short deadlines, so the timeout row takes a second; every other upstream answers at once. */
const TIMEOUTS = { connect_ms: 400, first_token_ms: 400, between_chunks_ms: 400, total_ms: 5_000 };
const MODEL_OF: Record<Wire, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', gemini: 'gemini-2.5-flash' };
const GRANT = 100_000;

/** Filled per case before its gateway starts: the fixture server looks a scenario up at request time. */
const scenarios: Record<string, Scenario> = {};
let upstream: FixtureServer;
let refusedBaseUrl: string;
let scenarioSeq = 0;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startFixtureServer(scenarios);
  refusedBaseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await upstream.close();
});

interface Setup {
  gw: TestGateway;
  seeded: Seeded;
  /** Requests the i-th target received so far; null for a refused port. */
  callsTo(i: number): number | null;
}

/** A fresh gateway (its own ledger and circuit breakers) whose three aliases all try `targets` in order. */
async function gatewayFor(targets: Upstream[], server: Record<string, number> = {}): Promise<Setup> {
  const names = targets.map(() => `s${++scenarioSeq}`);
  const providers: Record<string, unknown> = {};
  targets.forEach((t, i) => {
    const name = names[i] as string;
    if (!('refused' in t)) scenarios[name] = t.answer;
    const type = t.wire === 'openai' ? 'openai-compatible' : t.wire;
    const base_url = 'refused' in t ? refusedBaseUrl : upstream.baseUrl(name);
    providers[`p${i}`] = { type, base_url, paid: false, timeouts: TIMEOUTS };
  });
  const tier = { targets: targets.map((t, i) => ({ provider: `p${i}`, model: MODEL_OF[t.wire] })) };
  const config: GatewayConfig = parseConfig({
    server,
    // Each case must reach every target it lists: breakers are circuit-breaker.test.ts's subject.
    health: { failure_threshold: 1_000 },
    providers,
    aliases: { 'svc-fast': tier, 'svc-code': tier, 'svc-smart': tier },
  });
  const gw = await startTestGateway({ config });
  gateways.push(gw);
  const seeded = await gw.seed({ purchased: GRANT });
  return {
    gw,
    seeded,
    callsTo: (i) => ('refused' in (targets[i] as Upstream) ? null : upstream.requests.filter((r) => r.path.startsWith(`/${names[i]}/`)).length),
  };
}

const body = (stream: boolean) => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content: 'What is the capital of France?' }],
  max_tokens: 50,
  temperature: 0.5,
  stream,
});

interface Envelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}
interface Svc {
  routed_provider: string;
  credits_used: number;
  attempts?: { provider: string; outcome: string }[];
}

async function svcOf(res: Response, stream: boolean): Promise<Svc> {
  if (!stream) return ((await res.json()) as { svc: Svc }).svc;
  const data = sseData(await res.text());
  expect(data.at(-1)).toBe('[DONE]');
  return (JSON.parse(data.at(-2) as string) as { svc: Svc }).svc;
}

async function books(setup: Setup): Promise<{ spent: number; reserved: number; pending: number }> {
  const b = await setup.gw.store.ledger.balance(setup.seeded.accountId, 'live');
  return { spent: GRANT - b.purchased, reserved: b.reserved, pending: await setup.gw.store.ledger.countPendingHolds(setup.seeded.accountId) };
}

describe.each([
  ['non-streaming', false],
  ['streaming', true],
] as const)('docs/errors.md "Upstream failures", %s client', (_mode, stream) => {
  // A case whose upstream already answered 200 ends inside a started stream for a streaming client: that is
  // the next doc section's subject (sse-bytes.test.ts, fault-matrix.test.ts), not this table's.
  const cases = CASES.filter((c) => !(stream && c.accepted));

  it.each(cases)('$row: $variant', async (c) => {
    const setup = await gatewayFor(c.targets, c.server);
    const res = await chat(setup.gw, setup.seeded.secret, body(stream));

    if ('servedBy' in c.expect) {
      expect(res.status).toBe(200);
      const svc = await svcOf(res, stream);
      expect(svc.routed_provider).toBe(`p${c.expect.servedBy}`);
      // Every target before the one that answered was tried, once.
      expect(svc.attempts?.map((a) => a.provider)).toEqual(c.targets.slice(0, c.expect.servedBy + 1).map((_, i) => `p${i}`));
      // Charged once, for the answer the client got.
      expect(await books(setup)).toEqual({ spent: svc.credits_used, reserved: 0, pending: 0 });
    } else {
      const want = c.expect;
      const envelope = (await res.json()) as Envelope;
      expect({ status: res.status, type: envelope.error.type, code: envelope.error.code, param: envelope.error.param }).toEqual({
        status: want.status,
        type: want.type,
        code: want.code,
        param: want.param ?? null,
      });
      expect({
        'retry-after': res.headers.get('retry-after'),
        'retry-after-ms': res.headers.get('retry-after-ms'),
        'x-should-retry': res.headers.get('x-should-retry'),
      }).toEqual({
        'retry-after': want.retryAfter ?? null,
        'retry-after-ms': want.retryAfterMs ?? null,
        'x-should-retry': want.shouldRetry,
      });
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const after = await books(setup);
      expect({ reserved: after.reserved, pending: after.pending }).toEqual({ reserved: 0, pending: 0 });
      if (c.accepted) {
        // An upstream answered 200 before failing: the provider billed the prompt, so does the gateway.
        expect(after.spent).toBeGreaterThan(0);
      } else {
        // No upstream accepted the call: the hold was voided, nothing spent.
        expect(after.spent).toBe(0);
      }
    }
    // Failover went on, or stopped, as the row says.
    expect(c.targets.map((_, i) => setup.callsTo(i))).toEqual(c.calls);
  });
});

// ---- the official client ----------------------------------------------------------------------------

describe('the openai client on two rows', () => {
  /** An upstream raising before any answer; the client retries nothing, so each call is one request. */
  async function clientFor(targets: Upstream[]): Promise<{ client: OpenAI; setup: Setup }> {
    const setup = await gatewayFor(targets);
    return { client: new OpenAI({ baseURL: setup.gw.url, apiKey: setup.seeded.secret, maxRetries: 0 }), setup };
  }

  const request = {
    model: 'svc-fast',
    messages: [{ role: 'user' as const, content: 'What is the capital of France?' }],
    max_tokens: 50,
  };

  it(`${ROW.rateLimited}: raises OpenAI.RateLimitError with code upstream_rate_limited`, async () => {
    const { client, setup } = await clientFor([oa(openaiError(429, RATE_LIMIT, { 'retry-after': '2' })), oa(openaiError(429, RATE_LIMIT))]);
    const err: unknown = await client.chat.completions.create(request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect({ status: e.status, type: e.type, code: e.code, param: e.param }).toEqual({
      status: 429,
      type: 'rate_limit_error',
      code: 'upstream_rate_limited',
      param: null,
    });
    expect(e.headers?.get('retry-after')).toBe('2');
    expect((await books(setup)).spent).toBe(0);
  });

  it(`${ROW.refused}: raises OpenAI.BadRequestError with code context_length_exceeded`, async () => {
    const { client, setup } = await clientFor([
      oa(
        openaiError(400, {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.",
          param: 'messages',
          code: 'context_length_exceeded',
        }),
      ),
      oa(openaiOk),
    ]);
    const err: unknown = await client.chat.completions.create(request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect({ status: e.status, type: e.type, code: e.code, param: e.param }).toEqual({
      status: 400,
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
    });
    expect(setup.callsTo(1)).toBe(0);
    expect((await books(setup)).spent).toBe(0);
  });
});

// ---- this file and docs/errors.md agree ---------------------------------------------------------------

const ERRORS_DOC = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
/** OpenAI's error types: in the table's "client gets" column they are not codes. */
const ERROR_TYPES = new Set(['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'rate_limit_error', 'insufficient_quota', 'server_error']);

interface DocRow {
  /** The first column, backticks removed: what the upstream said. */
  said: string;
  /** The second column as written. */
  gets: string;
  /** The statuses the client may get (the second column's three-digit numbers). */
  statuses: number[];
  /** The codes the second column names; with `upstreamCode`, the upstream's own code is allowed too. */
  codes: string[];
  upstreamCode: boolean;
  /** "failover stops": no other target is tried; else "next target". */
  failoverStops: boolean;
  shouldRetry: string | null;
}

/** The rows of the table under "## Upstream failures" in docs/errors.md. */
function docRows(): DocRow[] {
  const doc = readFileSync(ERRORS_DOC, 'utf8');
  const section = /^## Upstream failures$([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
  if (section === undefined) throw new Error('docs/errors.md: no "## Upstream failures" section');
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  // The header row, then the |---| separator, then the rows.
  return lines.slice(2).map((line) => {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== 3) throw new Error(`docs/errors.md: a row of the upstream table without 3 cells: ${line}`);
    const [said, gets, headers] = cells as [string, string, string];
    return {
      said: said.replace(/`/g, ''),
      gets,
      statuses: [...gets.matchAll(/\b([1-5]\d\d)\b/g)].map((m) => Number(m[1])),
      codes: [...gets.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string).filter((t) => !ERROR_TYPES.has(t) && t !== 'code' && t !== 'param'),
      upstreamCode: /the upstream's `code`/.test(gets),
      failoverStops: /failover stops/.test(gets),
      shouldRetry: /`x-should-retry: (true|false)`/.exec(headers)?.[1] ?? null,
    };
  });
}

const DOC_ROWS = docRows();
const rowOf = (label: string): DocRow | undefined => DOC_ROWS.find((r) => r.said.startsWith(label));

/** What the i-th target of a case said. */
function saidBy(t: Upstream): Said {
  if ('refused' in t) return { status: null, words: ['connection refused'], code: null };
  const said = SAID.get(t.answer);
  if (!said) throw new Error('a scripted upstream without `says`: declare what it says');
  return said;
}

/** Whether the doc row's first column names what the upstream said: its status, or one of its words. */
function names(row: DocRow, said: Said): boolean {
  const cell = row.said.toLowerCase();
  if (said.status !== null && (new RegExp(`\\b${said.status}\\b`).test(cell) || cell.includes('any other status'))) return true;
  return said.words.some((w) => cell.includes(w.toLowerCase()));
}

/** Whether the target's failure is one a target that cannot serve the request gives (the doc's second row, by its words). */
const UNSUPPORTED_ROW = rowOf(ROW.unsupported);
const cannotServe = (said: Said): boolean => UNSUPPORTED_ROW !== undefined && names(UNSUPPORTED_ROW, { ...said, status: null });

/**
 * The target whose failure the doc says chooses the row: "the failure of the last target that could have
 * served the request" (of those called); a target that cannot serve it is skipped unless none could.
 */
function decidingTarget(c: Case): Upstream {
  const called = c.targets.filter((_, i) => c.calls[i] !== 0);
  const couldServe = called.filter((t) => !cannotServe(saidBy(t)));
  return (couldServe.at(-1) ?? called.at(-1)) as Upstream;
}

const isError = (e: Case['expect']): e is ErrorAnswer => !('servedBy' in e);

describe('this file and docs/errors.md "Upstream failures" agree', () => {
  it('the doc has the table', () => {
    expect(DOC_ROWS.length).toBeGreaterThanOrEqual(5);
    for (const r of DOC_ROWS) expect(r.statuses.length, r.said).toBeGreaterThan(0);
  });

  it('every row of the doc is a ROW of this file, and every ROW a row of the doc', () => {
    const labels = Object.values(ROW) as string[];
    expect(DOC_ROWS.filter((r) => labels.filter((l) => r.said.startsWith(l)).length !== 1).map((r) => r.said), 'doc rows with no (or more than one) ROW here').toEqual([]);
    expect(labels.filter((l) => DOC_ROWS.filter((r) => r.said.startsWith(l)).length !== 1), 'ROWs here with no (or more than one) row in the doc').toEqual([]);
  });

  it.each(DOC_ROWS.map((r) => [r.said, r] as const))('doc row "%s" has cases for every outcome it names', (_said, row) => {
    const cases = CASES.filter((c) => row.said.startsWith(c.row));
    expect(cases.length).toBeGreaterThan(0);
    const errors = cases.map((c) => c.expect).filter(isError);
    // Each status and code the row says the client may get is what some case ends with.
    expect(row.statuses.filter((s) => !errors.some((e) => e.status === s)), 'statuses of the row no case ends with').toEqual([]);
    expect(row.codes.filter((code) => !errors.some((e) => e.code === code)), 'codes of the row no case ends with').toEqual([]);
    if (row.failoverStops) {
      // "failover stops": no case of the row is served by another target, and none calls one.
      expect(cases.filter((c) => !isError(c.expect) || c.calls.slice(1).some((n) => n !== 0)).map((c) => c.variant)).toEqual([]);
    } else {
      // "next target": some case shows it served.
      expect(cases.some((c) => !isError(c.expect)), 'no case where the next target answers').toBe(true);
    }
  });

  it.each(CASES.map((c) => [c.variant, c] as const))('case "%s" is an instance of its row', (_variant, c) => {
    const row = rowOf(c.row);
    expect(row, `no row of docs/errors.md starts with "${c.row}"`).toBeDefined();
    if (!row) return;
    if (isError(c.expect)) {
      // The failure that chose the row is one the row's first column names ...
      const deciding = saidBy(decidingTarget(c));
      expect(names(row, deciding), `${JSON.stringify(deciding)} is not named by "${row.said}"`).toBe(true);
      // ... and the answer is one its other columns name.
      expect(row.statuses).toContain(c.expect.status);
      const allowed = [...row.codes, ...(row.upstreamCode && deciding.code !== null ? [deciding.code] : [])];
      expect(allowed, `"${row.gets}"`).toContain(c.expect.code);
      expect(c.expect.shouldRetry).toBe(row.shouldRetry);
    } else {
      // Every target that failed before the one that answered failed as the row says.
      const failed = c.targets.slice(0, c.expect.servedBy).map(saidBy);
      expect(failed.filter((s) => !names(row, s)), `not named by "${row.said}"`).toEqual([]);
    }
  });
});
