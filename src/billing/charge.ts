/**
 * What one completion costs, decided in one place: (prices, hold, delivery, upstream usage, how it ended)
 * -> credits or void. Pure, so every ending of every door is a row of one table test
 * (test/unit/charge.test.ts). The rule (docs/ledger.md, "What a completion is charged"):
 *
 * - No upstream accepted the call: void. Nobody was billed, so nobody pays.
 * - An upstream accepted it: the client pays for its prompt once and for what the upstream produced for it,
 *   whatever the ending (finished, client gone, upstream cut, slow reader ended, shutdown), because the
 *   provider bills the operator from the moment it accepted. The upstream's reported usage counts when it
 *   reported one (reasoning tokens included; a running total before the finish counts at least as much as
 *   the text produced); the gateway's count of the produced text otherwise.
 * - The charge never exceeds the hold; what the usage would have cost beyond it is the shortfall, reported
 *   to the operator on the usage event and in the logs.
 *
 * Upstream numbers are sanitized here (non-negative safe integers, else the gateway's estimate), so a
 * settle can never fail on what an upstream said.
 */
import type { UpstreamTokens } from '../providers/contract.js';
import type { CatalogEntry } from '../routing/catalog.js';
import { creditCost } from './pricing.js';
import { estimateDeliveredTokens } from './token-estimate.js';

/** How a completion ended. Recorded as the usage event's outcome. */
export type Ending =
  /** The answer finished. */
  | 'completed'
  /** Every target failed, or the stream broke and nothing could continue it. */
  | 'upstream_error'
  /** The client went away. */
  | 'client_closed'
  /** The client stopped reading for longer than the write deadline: the gateway ended the stream. */
  | 'write_timeout'
  /** The gateway was shutting down and its grace period ran out. */
  | 'shutdown';

/** Output the client received or the upstream produced for it, in text and non-empty deltas. */
export interface Produced {
  text: string;
  deltas: number;
}

export interface DeliveryFacts {
  /** An upstream accepted the call (answered 2xx): from then on the provider bills the prompt. */
  accepted: boolean;
  /**
   * Output of earlier attempts that the last one continued (a failover splice); empty when one attempt
   * produced the whole answer.
   */
  prefix: Produced;
  /** Output of the last attempt. */
  tail: Produced;
  /** The last attempt gave its finish reason, so its usage (which follows it) is its final count. */
  finished: boolean;
  /**
   * What the last attempt's upstream reported, as it said it (not yet sanitized); null if nothing. Before
   * the finish, a running total (Gemini reports them): the text produced since may exceed it.
   */
  usage: UpstreamTokens | null;
}

export interface ChargeInput {
  prices: Pick<CatalogEntry, 'inputCreditsPer1k' | 'outputCreditsPer1k'>;
  /** The gateway's prompt estimate (the quote's), used when the upstream's count is missing or unusable. */
  promptEstimate: number;
  /** Credits held for the request: the most it may be charged. */
  held: number;
  delivery: DeliveryFacts;
  ending: Ending;
}

export type Charge =
  | { kind: 'void' }
  | {
      kind: 'settle';
      credits: number;
      promptTokens: number;
      completionTokens: number;
      /**
       * Of promptTokens, read from the provider's cache; of completionTokens, spent reasoning. Recorded on the
       * usage event and reported to the client, not priced apart: reasoning is output and charged as such,
       * and cached input is charged as input (the catalog has one input price). 0 when the upstream did not
       * say, or when its count is not the one charged (an estimate, a splice).
       */
      cachedTokens: number;
      reasoningTokens: number;
      /** What the tokens cost beyond the hold: owed by nobody, reported to the operator. */
      shortfallCredits: number;
      /** Where the token counts came from. */
      source: 'upstream' | 'estimate';
    };

/**
 * Above any real request's tokens (context windows are millions at most): a larger report is a broken
 * upstream, and sums of such numbers would leave the integers the ledger can post.
 */
const MAX_REPORTED_TOKENS = 1e12;

/** A count an upstream reported, if it is one the ledger can post. */
export function usableCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_REPORTED_TOKENS;
}

export function decideCharge(input: ChargeInput): Charge {
  const { delivery: d } = input;
  if (!d.accepted) return { kind: 'void' };
  const spliced = d.prefix.text.length > 0 || d.prefix.deltas > 0;
  const upstreamPrompt = d.usage !== null && usableCount(d.usage.promptTokens) ? d.usage.promptTokens : null;
  const upstreamCompletion = d.usage !== null && usableCount(d.usage.completionTokens) ? d.usage.completionTokens : null;
  // After a splice the last upstream's prompt carried the partial answer as well: the client's own prompt
  // is the gateway's estimate of it, and the earlier attempts' output is counted from their text.
  const promptTokens = !spliced && upstreamPrompt !== null ? upstreamPrompt : input.promptEstimate;
  const before = spliced ? estimateDeliveredTokens(d.prefix.text, d.prefix.deltas) : 0;
  const counted = estimateDeliveredTokens(d.tail.text, d.tail.deltas);
  // A final count is the upstream's word; a running one is a floor the text produced since may pass.
  const fromUpstream = upstreamCompletion !== null && (d.finished || upstreamCompletion >= counted);
  const tail = fromUpstream ? (upstreamCompletion as number) : counted;
  const completionTokens = before + tail;
  const cost = creditCost(input.prices, promptTokens, completionTokens);
  const credits = Math.min(cost, input.held);
  const cached = d.usage?.cachedTokens;
  const reasoning = d.usage?.reasoningTokens;
  return {
    kind: 'settle',
    credits,
    promptTokens,
    completionTokens,
    cachedTokens: !spliced && upstreamPrompt !== null && usableCount(cached) ? Math.min(cached, promptTokens) : 0,
    reasoningTokens: fromUpstream && usableCount(reasoning) ? Math.min(reasoning, tail) : 0,
    shortfallCredits: cost - credits,
    source: fromUpstream && !spliced ? 'upstream' : 'estimate',
  };
}
