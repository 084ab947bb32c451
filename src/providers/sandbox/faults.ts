/**
 * Fault injection for the sandbox, shared by the in-process adapter and the HTTP app so both fail the same
 * way. Objects are strict: a typo in a test's fault (`token` for `tokens`) is refused, not silently ignored.
 *
 * Every fault may carry a window: `after` (serve the first N requests normally, counted since the fault was
 * set) and `times` (then apply it to this many requests only). A fault sent per request (header) applies to
 * that request and ignores the window.
 */
import { z } from 'zod';

export interface SandboxPace {
  /** Delay before the first token (the role chunk goes out with it). */
  timeToFirstTokenMs: number;
  /** 0 = as fast as possible (the simulator still yields to the event loop). */
  tokensPerSecond: number;
}

const windowFields = {
  after: z.number().int().min(0).optional(),
  times: z.number().int().min(1).optional(),
};
const count = z.number().int().min(0);

export const sandboxFaultSchema = z.discriminatedUnion('type', [
  /** An error status with an OpenAI error envelope; 429 carries Retry-After. */
  z.strictObject({
    type: z.literal('status'),
    status: z.number().int().min(400).max(599),
    message: z.string().optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    ...windowFields,
  }),
  /**
   * Nothing is generated until the client gives up. `headers` (default true): the 200 and the SSE headers are
   * sent and then nothing, as a queued OpenAI request looks; false: not even the status line.
   */
  z.strictObject({ type: z.literal('stall_before_first_token'), headers: z.boolean().optional(), ...windowFields }),
  z.strictObject({ type: z.literal('slow_first_token'), ms: count, ...windowFields }),
  /** Sends N tokens, then holds the connection open silently until the client gives up. */
  z.strictObject({ type: z.literal('stall_after_tokens'), tokens: count, ...windowFields }),
  /** Sends N tokens, then ends the body cleanly without a finish_reason or [DONE]. */
  z.strictObject({ type: z.literal('cut_after_tokens'), tokens: count, ...windowFields }),
  /** Sends N tokens, then a chunk that is not valid JSON, then ends the body. */
  z.strictObject({ type: z.literal('malformed_chunk'), afterTokens: count, ...windowFields }),
  /**
   * Resets the TCP connection: without `afterTokens` before any response byte, else after N tokens.
   * Needs the Node runtime hook; elsewhere the response body is errored instead.
   */
  z.strictObject({ type: z.literal('reset'), afterTokens: count.optional(), ...windowFields }),
  z.strictObject({
    type: z.literal('pace'),
    timeToFirstTokenMs: count.optional(),
    tokensPerSecond: z.number().min(0).optional(),
    ...windowFields,
  }),
]);

export type SandboxFault = z.infer<typeof sandboxFaultSchema>;
/** One fault or several (a pace override plus one failure, say). */
export type SandboxFaultInput = SandboxFault | SandboxFault[];
export type FailureFault = Exclude<SandboxFault, { type: 'pace' } | { type: 'slow_first_token' }>;

const faultInputSchema = z.union([sandboxFaultSchema, z.array(sandboxFaultSchema)]);

export type FaultParse = { ok: true; faults: SandboxFault[] } | { ok: false; message: string };

export function parseFaults(json: unknown): FaultParse {
  const result = faultInputSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { ok: false, message: `invalid sandbox fault: ${where}${issue?.message ?? 'unrecognized'}` };
  }
  return { ok: true, faults: toList(result.data) };
}

export function toList(input: SandboxFaultInput | null | undefined): SandboxFault[] {
  if (!input) return [];
  return Array.isArray(input) ? input : [input];
}

/** What one request will do: its pace, and at most one failure (the first one listed wins). */
export interface FaultPlan {
  pace: SandboxPace;
  failure: FailureFault | null;
}

export function planFaults(faults: readonly SandboxFault[], base: SandboxPace): FaultPlan {
  const pace = { ...base };
  let failure: FailureFault | null = null;
  for (const f of faults) {
    if (f.type === 'pace') {
      if (f.timeToFirstTokenMs !== undefined) pace.timeToFirstTokenMs = f.timeToFirstTokenMs;
      if (f.tokensPerSecond !== undefined) pace.tokensPerSecond = f.tokensPerSecond;
    } else if (f.type === 'slow_first_token') {
      pace.timeToFirstTokenMs = f.ms;
    } else if (failure === null) {
      failure = f;
    }
  }
  return { pace, failure };
}

/** The token count after which a mid-stream failure strikes; null for failures that strike before any token. */
export function failureTokenIndex(failure: FailureFault | null): number | null {
  switch (failure?.type) {
    case 'stall_after_tokens':
    case 'cut_after_tokens':
      return failure.tokens;
    case 'malformed_chunk':
      return failure.afterTokens;
    case 'reset':
      return failure.afterTokens ?? null;
    default:
      return null;
  }
}
