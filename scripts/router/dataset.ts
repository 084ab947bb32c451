/**
 * The labelled prompts the router learns from: the evaluation set copied into eval/routing/ (dev.jsonl)
 * and the prompts written for svc-gateway (written.jsonl), which may carry a whole conversation
 * (`messages`, `tools`) to teach the context features.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import type { ChatMessage, FunctionTool } from '../../src/openai/chat-types.js';
import type { RoutableRequest } from '../../src/routing/auto/features.js';
import { TIERS, type Tier } from '../../src/routing/auto/tier.js';

export interface LabelledPrompt {
  id: string;
  source: string;
  /** Real-user prompts only: the kind of place they come from (real-set.ts). */
  family?: string;
  subset?: string;
  /** The last user turn (what the scorer prices); the whole request when `messages` is absent. */
  prompt: string;
  tier: Tier;
  why?: string;
  messages?: ChatMessage[];
  tools?: FunctionTool[];
}

/** The repository root: the nearest directory above this file holding eval/routing/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'eval', 'routing', 'dev.jsonl'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('eval/routing/dev.jsonl not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export const DEV_SET = 'eval/routing/dev.jsonl';
export const WRITTEN_SET = 'eval/routing/written.jsonl';
/** Prompts a reviewer wrote to find a retraining's regressions: never trained on (eval/routing/PROVENANCE.md). */
export const REVIEW_SET = 'eval/routing/review.jsonl';
/**
 * Everyday requests, all svc-fast, many sharing words with code, science or maths: never trained on, they
 * measure how often a training sends easy prompts up, as a rate (eval/routing/PROVENANCE.md).
 */
export const EVERYDAY_SET = 'eval/routing/everyday.jsonl';
export const SCORER = 'eval/routing/score.mjs';

export function parseDataset(text: string, name: string): LabelledPrompt[] {
  const rows: LabelledPrompt[] = [];
  const ids = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const row = JSON.parse(line) as LabelledPrompt;
    if (typeof row.id !== 'string' || typeof row.prompt !== 'string' || !TIERS.includes(row.tier)) {
      throw new Error(`${name}:${i + 1}: needs id, prompt and tier (fast|code|smart)`);
    }
    if (ids.has(row.id)) throw new Error(`${name}:${i + 1}: duplicate id ${row.id}`);
    ids.add(row.id);
    rows.push(row);
  });
  return rows;
}

export function readDataset(relativePath: string): LabelledPrompt[] {
  return parseDataset(readFileSync(join(repoRoot(), relativePath), 'utf8'), relativePath);
}

export function requestOf(row: LabelledPrompt): RoutableRequest {
  return { messages: row.messages ?? [{ role: 'user', content: row.prompt }], tools: row.tools };
}
