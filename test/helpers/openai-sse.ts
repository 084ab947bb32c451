/** OpenAI-shaped SSE frames for scripted upstreams in tests (test/providers/helpers/fixture-server.ts). */

/** One `chat.completion.chunk` frame: a delta for choice 0, or (with `usage`) a usage-only chunk. */
export function sseChunk(delta: object, finish: string | null = null, usage: object | null = null): string {
  const choices = usage ? [] : [{ index: 0, delta, finish_reason: finish }];
  return `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 0, model: 'm', choices, ...(usage ? { usage } : {}) })}\n\n`;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
