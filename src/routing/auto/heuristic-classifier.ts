/**
 * svc-auto's tier choice. This is the interim rule-based classifier; issue 5 replaces it with a learned
 * model behind the same `classifyPrompt` signature. It errs toward capability: when unsure it says smart.
 */
import type { ChatMessage } from '../../openai/chat-types.js';

export type Tier = 'fast' | 'code' | 'smart';

export interface TierDecision {
  tier: Tier;
  confidence: number;
  reason: string;
}

/** Only the head of very long prompts is read: the decision must stay in microseconds. */
const MAX_CHARS = 4096;

const CODE = /```|\b(function|def|class|import|return|const|let|var|public|static|SELECT|#include)\b|=>|\w+\(\)|;\s*$/m;
const CODE_ASK = /\b(code|script|function|bug|debug|refactor|implement|compile|regex|sql|python|javascript|typescript|java|rust|golang|c\+\+)\b/i;
const SMART = /\b(prove|proof|theorem|lemma|derive|integral|equation|probability|optimi[sz]e|plan|step[- ]by[- ]step|reason|why|analy[sz]e|design|strategy|compare)\b|[=<>^∫∑√]/i;
const FAST = /\b(summari[sz]e|classify|translate|extract|rewrite|rephrase|tl;?dr|sentiment|categori[sz]e|list|what is|who is|define)\b/i;

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content.slice(0, MAX_CHARS);
    if (Array.isArray(m.content)) {
      let text = '';
      for (const p of m.content) if (p.type === 'text') text += p.text + '\n';
      return text.slice(0, MAX_CHARS);
    }
  }
  return '';
}

export function classifyPrompt(messages: readonly ChatMessage[], qualityBias: number): TierDecision {
  const text = lastUserText(messages);
  if (CODE.test(text) || CODE_ASK.test(text)) return { tier: 'code', confidence: 0.7, reason: 'code markers' };
  if (SMART.test(text)) return { tier: 'smart', confidence: 0.7, reason: 'reasoning or math markers' };
  if (FAST.test(text) || text.length < 400 * (1 - qualityBias) + 80) {
    return { tier: 'fast', confidence: 0.6, reason: FAST.test(text) ? 'simple task markers' : 'short prompt' };
  }
  return { tier: 'smart', confidence: 0.5, reason: 'no clear markers: favour quality' };
}
