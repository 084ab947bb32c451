/**
 * The attachments' tokens for each target a request may reach. Failover may take a request to any target
 * of its route, so the hold covers the largest of them; a part whose cost no bound covers is refused here
 * (400 `unbounded_media_url`) unless the operator set `limits.media_url_max_tokens`, which then stands in
 * for its cost.
 */
import { GatewayError, invalidRequest } from '../../openai/errors.js';
import type { ProviderProtocol } from '../../providers/contract.js';
import type { MediaFact, MediaPart } from './media-facts.js';
import { mediaRulesFor, type MediaRules } from './media-rules.js';
import { addRanges, ZERO, type TokenRange } from './size-bounds.js';

export interface MediaTarget {
  adapter: { readonly name: string; readonly protocol: ProviderProtocol };
  model: string;
}

export interface MediaPolicy {
  /** `limits.media_url_max_tokens`: the tokens held for one part of unknowable size; null refuses such parts. */
  mediaUrlMaxTokens: number | null;
}

export const REFUSE_UNBOUNDED: MediaPolicy = { mediaUrlMaxTokens: null };

/** Key of a target in estimates: `provider/model`, as `routed_provider` and `routed_model` name it. */
export function targetKey(target: MediaTarget): string {
  return `${target.adapter.name}/${target.model}`;
}

/**
 * Tokens of all `parts` per target key; null for a target that cannot bound a part's cost (an image URL to a
 * target that fetches and bills whatever it holds): such a target is left out of this request's failover, so
 * the request goes to the targets that can. Throws the 400 when no target can.
 */
export function estimateMediaByTarget(
  parts: readonly MediaPart[],
  targets: readonly MediaTarget[],
  policy: MediaPolicy,
): Map<string, TokenRange | null> {
  const byRules = new Map<string, TokenRange | GatewayError>();
  const out = new Map<string, TokenRange | null>();
  let refusal: GatewayError | null = null;
  for (const target of targets) {
    const rules = mediaRulesFor(target.adapter.protocol, target.model);
    let total = byRules.get(rules.id);
    if (total === undefined) {
      try {
        total = estimateMedia(parts, rules, target.adapter.protocol, policy);
      } catch (e) {
        if (!(e instanceof GatewayError) || e.code !== 'unbounded_media_url') throw e;
        total = e;
      }
      byRules.set(rules.id, total);
    }
    if (total instanceof GatewayError) {
      refusal ??= total;
      out.set(targetKey(target), null);
    } else {
      out.set(targetKey(target), total);
    }
  }
  if (refusal !== null && [...out.values()].every((r) => r === null)) throw refusal;
  return out;
}

export function estimateMedia(parts: readonly MediaPart[], rules: MediaRules, protocol: ProviderProtocol, policy: MediaPolicy): TokenRange {
  let total = ZERO;
  for (const part of parts) {
    const r = rules.estimate(part.fact);
    if (r !== null) {
      total = addRanges(total, r);
    } else if (policy.mediaUrlMaxTokens !== null) {
      total = addRanges(total, { likely: policy.mediaUrlMaxTokens, upper: policy.mediaUrlMaxTokens });
    } else {
      throw unboundedMedia(part.param, part.fact, protocol);
    }
  }
  return total;
}

function unboundedMedia(param: string, fact: MediaFact, protocol: ProviderProtocol): GatewayError {
  const fix = 'Send it inline (base64 data), or ask the operator to set limits.media_url_max_tokens.';
  let what: string;
  if (fact.type === 'remote') {
    what = `${param} links to ${fact.what === 'document' ? 'a file' : `${fact.what === 'audio' ? 'an audio' : 'a video'} file`} by URL`;
  } else if (fact.type === 'stored-file') {
    what = `${param} names a file stored at the provider`;
  } else {
    what = `${param} is an image URL and this model may be served by a ${protocol} target, which fetches the URL itself and bills whatever it holds (a video as well as an image)`;
  }
  return invalidRequest(
    `${what}: its size, and so its cost, cannot be known before the call, and the gateway holds the worst case of every request. ${fix}`,
    param,
    'unbounded_media_url',
  );
}
