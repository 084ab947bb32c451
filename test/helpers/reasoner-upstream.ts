/**
 * A DeepSeek-style reasoner for tests: OpenAI's chat protocol, with the reasoning text as
 * `reasoning_content`. Streamed, every reasoning delta comes before the first answer delta, as DeepSeek's do
 * (test/e2e/target-params.test.ts, test/e2e/legacy-completions.test.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeInPieces } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;

export const REASONING_TEXT = 'Two and two make four. ';
export const ANSWER_TEXT = 'The answer is 4.';
export const REASONER_USAGE = {
  prompt_tokens: 12,
  completion_tokens: 30,
  total_tokens: 42,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 22 },
};

/** Answers every chat request with reasoning text, then the answer; streams as DeepSeek does. Keeps the bodies. */
export function reasonerHandler(bodies: Json[]) {
  return async (_req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const body = JSON.parse(raw) as Json;
    bodies.push(body);
    const head = { id: 'chatcmpl-reasoner', created: 1_780_000_000, model: String(body.model) };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ...head,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: ANSWER_TEXT, reasoning_content: REASONING_TEXT }, finish_reason: 'stop' }],
          usage: REASONER_USAGE,
        }),
      );
      return;
    }
    const frame = (choices: unknown[], extra: Json = {}): string => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
    const delta = (d: Json, finish: string | null = null): string => frame([{ index: 0, delta: d, finish_reason: finish }]);
    let sse = delta({ role: 'assistant', content: null, reasoning_content: '' });
    for (const piece of REASONING_TEXT.match(/\S+\s*/g) ?? []) sse += delta({ content: null, reasoning_content: piece });
    for (const piece of ANSWER_TEXT.match(/\S+\s*/g) ?? []) sse += delta({ content: piece, reasoning_content: null });
    sse += delta({}, 'stop');
    sse += frame([], { usage: REASONER_USAGE });
    sse += 'data: [DONE]\n\n';
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    await writeInPieces(res, sse);
    res.end();
  };
}
