/**
 * Which of a request's parameters one target takes: `paramsFor` is the one place that decides it, from the
 * target's capabilities (./model-capabilities.ts). The adapters receive its request (`withTargetParams`
 * wraps each target's adapter), and the HTTP layer calls it again to name what was dropped for the target
 * that served (`x-svc-dropped-params`) or, with `strict_params`, to refuse before anything is held.
 *
 * - The spec's defaults (temperature 0.7, top_p 1) are filled in only where the target takes sampling
 *   parameters; elsewhere no sampling parameter is sent, whatever the client sent.
 * - A value the client set that the target cannot take is dropped and named, except values that ask for
 *   nothing (temperature or top_p 1 where the model only runs at 1, penalties of 0, `store: false`).
 * - A parameter that changes what comes back (`logprobs`, a non-empty `logit_bias`) is not dropped: the
 *   target cannot serve the request (`refused`), and failover tries the next one.
 */
import type { ChatRequest, ReasoningEffort } from '../openai/chat-types.js';
import type { ProviderAdapter, ProviderProtocol, UpstreamCall } from './contract.js';
import { UnsupportedRequestError } from './upstream-failures.js';
import type { ModelCapabilities } from './model-capabilities.js';
import { anthropicThinkingBudget } from './reasoning-effort.js';

/** The specification's defaults, for targets that take sampling parameters. */
export const DEFAULT_TEMPERATURE = 0.7;
export const DEFAULT_TOP_P = 1;

export interface ParamTarget {
  protocol: ProviderProtocol;
  model: string;
  capabilities: ModelCapabilities;
}

export type BoundedRequest = ChatRequest & { max_tokens: number };

/** The `max_tokens` this target is asked for: the request's, down to the model's output limit. */
export function maxTokensFor(target: ParamTarget, maxTokens: number): number {
  const limit = target.capabilities.maxOutputTokens;
  return limit !== null && maxTokens > limit ? limit : maxTokens;
}

export interface TargetParams {
  /** The request as this target is to receive it. */
  request: BoundedRequest;
  /** Parameters the client set that this target does not receive, in a stable order. */
  dropped: string[];
  /** Why this target cannot serve the request at all; null when it can. */
  refused: string | null;
  /** The parameter that made it refuse. */
  refusedParam: string | null;
}

const PLATFORM_OPTIONS = [
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'safety_identifier',
] as const satisfies readonly (keyof ChatRequest)[];

/**
 * What each target was given for each request, so the adapter's call and the answer's
 * `x-svc-dropped-params` header share one computation per request and target. Weak: an entry lives as long
 * as its request object. Requests are not mutated once routed (a continuation is a new request object).
 */
const computed = new WeakMap<BoundedRequest, WeakMap<ParamTarget, TargetParams>>();

export function paramsFor(target: ParamTarget, request: BoundedRequest): TargetParams {
  let byTarget = computed.get(request);
  if (byTarget === undefined) {
    byTarget = new WeakMap();
    computed.set(request, byTarget);
  }
  let params = byTarget.get(target);
  if (params === undefined) {
    params = computeParams(target, request);
    byTarget.set(target, params);
  }
  return params;
}

function computeParams(target: ParamTarget, request: BoundedRequest): TargetParams {
  const caps = target.capabilities;
  const out: BoundedRequest = { ...request };
  const dropped: string[] = [];
  const drop = (param: keyof ChatRequest, named = true): void => {
    if (named) dropped.push(param);
    delete out[param];
  };

  let refused: string | null = null;
  let refusedParam: string | null = null;
  if (!caps.logprobs && (request.logprobs === true || request.top_logprobs != null)) {
    refused = `'logprobs' are not available from ${target.model}`;
    refusedParam = request.logprobs === true ? 'logprobs' : 'top_logprobs';
  } else if (!caps.logitBias && request.logit_bias != null && Object.keys(request.logit_bias).length > 0) {
    refused = `'logit_bias' has no equivalent on ${target.model}`;
    refusedParam = 'logit_bias';
  } else if (!caps.jsonSchema && request.response_format?.type === 'json_schema') {
    refused = `'response_format' json_schema is not guaranteed by ${target.model}`;
    refusedParam = 'response_format';
  }

  out.max_tokens = maxTokensFor(target, out.max_tokens);

  const effort = out.reasoning_effort;
  if (effort !== undefined && caps.reasoningEfforts !== null && !caps.reasoningEfforts.includes(effort)) {
    out.reasoning_effort = nearestEffort(effort, caps.reasoningEfforts);
  }
  if (effort !== undefined) {
    const forcedTool = out.tools !== undefined && out.tools.length > 0 && out.tool_choice !== undefined && out.tool_choice !== 'auto' && out.tool_choice !== 'none';
    // `none` asks a model that does not reason for nothing: dropped unnamed.
    if (!caps.reasoning && effort === 'none') {
      drop('reasoning_effort', false);
    } else if (
      !caps.reasoning ||
      (effort !== 'none' && caps.minReasoningTokens > 0 && out.max_tokens <= caps.minReasoningTokens) ||
      (effort !== 'none' && forcedTool && !caps.forcedToolWhileReasoning)
    ) {
      drop('reasoning_effort');
    } else if (target.protocol === 'anthropic' && anthropicThinkingBudget(effort, out.max_tokens) === null && effort !== 'none') {
      drop('reasoning_effort');
    }
  }
  const reasoningOn = out.reasoning_effort !== undefined && out.reasoning_effort !== 'none';

  if (caps.sampling && (caps.samplingWhileReasoning || !reasoningOn)) {
    out.temperature = request.temperature ?? DEFAULT_TEMPERATURE;
    out.top_p = request.top_p ?? DEFAULT_TOP_P;
  } else {
    // 1 is the only value these models run at: sending it asks for nothing, dropping it loses nothing.
    if (request.temperature !== null && request.temperature !== 1) dropped.push('temperature');
    if (request.top_p !== null && request.top_p !== 1) dropped.push('top_p');
    out.temperature = null;
    out.top_p = null;
  }
  // Values that ask for nothing, where the target would refuse the field itself.
  if (!caps.logprobs && request.logprobs === false && request.top_logprobs == null) drop('logprobs', false);
  if (!caps.logitBias && request.logit_bias != null && Object.keys(request.logit_bias).length === 0) drop('logit_bias', false);
  if (!caps.penalties) {
    if (request.presence_penalty != null) drop('presence_penalty', request.presence_penalty !== 0);
    if (request.frequency_penalty != null) drop('frequency_penalty', request.frequency_penalty !== 0);
  }
  if (!caps.seed && request.seed != null) drop('seed');

  const stop = request.stop;
  if (stop != null) {
    const list = typeof stop === 'string' ? [stop] : stop;
    if (caps.maxStopSequences === 0) drop('stop');
    else if (list.length > caps.maxStopSequences) {
      // The first ones are kept: a client lists its most important stop first, and each one kept still holds.
      out.stop = list.slice(0, caps.maxStopSequences);
      dropped.push('stop');
    }
  }

  if (!caps.verbosity && request.verbosity !== undefined) drop('verbosity');
  if (!caps.user && request.user !== undefined) drop('user');
  if (!caps.parallelToolCallsOff && request.parallel_tool_calls === false && (request.tools?.length ?? 0) > 0) {
    drop('parallel_tool_calls');
  }

  if (!caps.platformOptions) {
    if (request.store !== undefined) drop('store', request.store);
    if (request.metadata !== undefined) drop('metadata');
    for (const p of PLATFORM_OPTIONS) if (request[p] !== undefined) drop(p);
  } else if (request.metadata !== undefined && request.store !== true) {
    // OpenAI refuses `metadata` without `store: true`: it labels stored completions, and nothing is stored.
    drop('metadata');
  }
  return { request: out, dropped, refused, refusedParam };
}

const EFFORT_ORDER: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** The value of `allowed` nearest to `effort` in the order of effort; between two, the higher. */
function nearestEffort(effort: ReasoningEffort, allowed: readonly ReasoningEffort[]): ReasoningEffort {
  const at = EFFORT_ORDER.indexOf(effort);
  let best = allowed[0] as ReasoningEffort;
  for (const candidate of allowed) {
    const d = Math.abs(EFFORT_ORDER.indexOf(candidate) - at);
    const bestD = Math.abs(EFFORT_ORDER.indexOf(best) - at);
    if (d < bestD || (d === bestD && EFFORT_ORDER.indexOf(candidate) > EFFORT_ORDER.indexOf(best))) best = candidate;
  }
  return best;
}

/** Names the parameters the serving target did not receive (docs/api.md, "Parameters per target"). */
export const DROPPED_PARAMS_HEADER = 'x-svc-dropped-params';

/**
 * The adapter of one target: every call goes out with the parameters this target takes. With
 * `strict_params` (the operator's switch), a target that would drop
 * one cannot serve the request, and failover tries the next.
 */
export function withTargetParams(inner: ProviderAdapter, target: ParamTarget, strict = false): ProviderAdapter {
  const prepare = (call: UpstreamCall): UpstreamCall => {
    const params = paramsFor(target, call.request);
    if (params.refused !== null) throw new UnsupportedRequestError(params.refused, params.refusedParam);
    if (strict && params.dropped.length > 0) {
      throw new UnsupportedRequestError(
        `${target.model} does not take ${params.dropped.map((p) => `'${p}'`).join(', ')} (strict_params)`,
        params.dropped[0] ?? null,
      );
    }
    return { ...call, request: params.request };
  };
  return {
    name: inner.name,
    protocol: inner.protocol,
    paid: inner.paid,
    complete: (call) => prepared(call, inner.complete),
    stream: (call) => prepared(call, inner.stream),
  };
  /**
   * `send(prepare(call))`, with a refusal of `prepare` as a rejection: not an async arrow around a promise,
   * which costs two promises more on every request's path.
   */
  function prepared<T>(call: UpstreamCall, send: (call: UpstreamCall) => Promise<T>): Promise<T> {
    let ready: UpstreamCall;
    try {
      ready = prepare(call);
    } catch (e) {
      return Promise.reject(e);
    }
    return send.call(inner, ready);
  }
}
