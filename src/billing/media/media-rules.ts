/**
 * Which token rules apply to an attachment sent to a given target: chosen by the target's protocol and,
 * where a provider's rules differ between its models (OpenAI, Anthropic), by the model's name.
 */
import type { ProviderProtocol } from '../../providers/contract.js';
import { anthropicRules } from './anthropic-rules.js';
import { geminiRules } from './gemini-rules.js';
import type { MediaFact } from './media-facts.js';
import { openAIRules } from './openai-rules.js';
import type { TokenRange } from './size-bounds.js';

export interface MediaRules {
  /** Names the rule set (`openai:tiles-85-170`, `anthropic:2576px`, `gemini`): targets sharing one are estimated once. */
  readonly id: string;
  /** What one attachment may cost; null when this provider's charge for it has no bound the gateway can know. */
  estimate(fact: MediaFact): TokenRange | null;
}

export function mediaRulesFor(protocol: ProviderProtocol, model: string): MediaRules {
  switch (protocol) {
    case 'anthropic':
      return anthropicRules(model);
    case 'gemini':
      return geminiRules();
    case 'openai-compatible':
    case 'sandbox':
      // The sandbox simulates an OpenAI-compatible server, so it is held like one.
      return openAIRules(model);
  }
}
