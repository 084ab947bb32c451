/**
 * OpenAI's `reasoning_effort` in the terms of the providers that budget thinking instead.
 *
 * Anthropic and Gemini 2.5 take a token budget, which counts against the output bound (`max_tokens`), so the
 * budget is a share of that bound: the more effort, the more of the bound goes to thinking. Gemini 3 takes a
 * level. The shares are the gateway's choice (OpenAI publishes none); docs/providers.md lists them.
 */
import type { ReasoningEffort } from '../openai/chat-types.js';

/** The share of the output bound given to thinking at each effort. */
export const EFFORT_SHARE: Readonly<Record<ReasoningEffort, number>> = {
  none: 0,
  minimal: 0.1,
  low: 0.25,
  medium: 0.5,
  high: 0.8,
  xhigh: 0.9,
  max: 0.95,
};

/** Anthropic's smallest `budget_tokens`. */
export const ANTHROPIC_MIN_BUDGET = 1024;

/**
 * `budget_tokens` for Anthropic's `thinking: {type: "enabled"}`: at least 1024, below `max_tokens` (both
 * required by the API). Null: no thinking (`none`, or a bound too small to think within).
 */
export function anthropicThinkingBudget(effort: ReasoningEffort, maxTokens: number): number | null {
  if (effort === 'none') return null;
  const budget = Math.max(ANTHROPIC_MIN_BUDGET, Math.floor(EFFORT_SHARE[effort] * maxTokens));
  return budget < maxTokens ? budget : null;
}

/**
 * `includeThoughts`: the client asked for reasoning, so Gemini is asked for its thought summaries, which reach
 * the client as `reasoning_content` (they are billed as thinking whether shown or not).
 */
export type GeminiThinkingConfig = ({ thinkingBudget: number } | { thinkingLevel: 'minimal' | 'low' | 'medium' | 'high' }) & {
  includeThoughts?: boolean;
};

/**
 * Gemini's `generationConfig.thinkingConfig`. Gemini 3 and later: `thinkingLevel` (Pro models take only low and
 * high; Flash also minimal and medium; none of them turns thinking fully off, so `none` is the least there is).
 * Gemini 2.5: `thinkingBudget` (Pro: 128..32768 and thinking cannot be turned off; Flash and Flash-Lite:
 * 0 turns it off, else 512..24576).
 */
export function geminiThinkingConfig(effort: ReasoningEffort, model: string, maxTokens: number): GeminiThinkingConfig {
  const name = model.toLowerCase().replace(/^.*\//, '');
  const pro = name.includes('pro');
  const config = levelOrBudget(effort, name, pro, maxTokens);
  // Thinking turned off (or as low as it goes, where `none` was asked) has no thoughts to show.
  if (effort === 'none' || ('thinkingBudget' in config && config.thinkingBudget === 0)) return config;
  return { ...config, includeThoughts: true };
}

function levelOrBudget(effort: ReasoningEffort, name: string, pro: boolean, maxTokens: number): GeminiThinkingConfig {
  if (!name.startsWith('gemini-2.')) {
    if (pro) return { thinkingLevel: effort === 'none' || effort === 'minimal' || effort === 'low' ? 'low' : 'high' };
    if (effort === 'none' || effort === 'minimal') return { thinkingLevel: 'minimal' };
    return { thinkingLevel: effort === 'low' || effort === 'medium' ? effort : 'high' };
  }
  const [min, max] = pro ? [128, 32_768] : [512, 24_576];
  if (effort === 'none') return { thinkingBudget: pro ? min : 0 };
  // Thinking counts against maxOutputTokens: a bound no larger than the smallest budget would leave no room
  // for the answer. Flash turns thinking off then; Pro cannot, and thinks as little as it can.
  if (maxTokens <= 2 * min) return { thinkingBudget: pro ? min : 0 };
  return { thinkingBudget: Math.min(max, Math.max(min, Math.floor(EFFORT_SHARE[effort] * maxTokens))) };
}
