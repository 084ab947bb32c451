/** A load generator for the cluster tests: many concurrent clients, some streaming, some hanging up. */
import type { Instance } from './cluster.js';

export interface LoadClient {
  secret: string;
}

export interface LoadResult {
  statuses: Map<number, number>;
  hungUp: number;
  /** Streams that ended without `[DONE]` although the client did not hang up. */
  truncated: number;
  /** Connection errors and truncated streams, per instance URL. */
  failuresByInstance: Map<string, number>;
  /** Error codes of answers other than 200 and 402 (`status code`), so a failure says what the gateway said. */
  otherErrors: Map<string, number>;
}

export interface LoadOptions {
  requests: number;
  /** Fraction of streaming requests whose client disconnects after the first content chunk. */
  hangUpRate: number;
  maxTokens: number;
}

async function one(instance: Instance, client: LoadClient, i: number, opts: LoadOptions, result: LoadResult): Promise<void> {
  const stream = i % 2 === 0;
  const hangUp = stream && (i * 7919) % 1000 < opts.hangUpRate * 1000;
  const abort = new AbortController();
  let res: Response;
  try {
    res = await fetch(`${instance.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: ['svc-fast', 'svc-code', 'svc-smart', 'svc-auto'][i % 4],
        messages: [{ role: 'user', content: `Request ${i}: summarize the plot of a short story.` }],
        max_tokens: opts.maxTokens,
        stream,
      }),
      signal: abort.signal,
    });
  } catch {
    result.statuses.set(-1, (result.statuses.get(-1) ?? 0) + 1);
    fail(result, instance);
    return;
  }
  result.statuses.set(res.status, (result.statuses.get(res.status) ?? 0) + 1);
  if (!stream || res.status !== 200) {
    const body = await res.text();
    if (res.status !== 200 && res.status !== 402) {
      const code = `${res.status} ${errorCode(body)}`;
      result.otherErrors.set(code, (result.otherErrors.get(code) ?? 0) + 1);
    }
    return;
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (hangUp && text.includes('"content":"') && text.split('"content":"').length > 2) {
        result.hungUp++;
        abort.abort();
        return;
      }
    }
  } catch {
    if (!hangUp) {
      result.truncated++;
      fail(result, instance);
    }
    return;
  }
  if (!text.endsWith('data: [DONE]\n\n')) {
    result.truncated++;
    fail(result, instance);
  }
}

function errorCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown } };
    return String(parsed.error?.code ?? 'no_code');
  } catch {
    return 'not_json';
  }
}

function fail(result: LoadResult, instance: Instance): void {
  result.failuresByInstance.set(instance.url, (result.failuresByInstance.get(instance.url) ?? 0) + 1);
}

/** Fires every request at once, spread round-robin over the instances and clients. */
export async function runLoad(instances: Instance[], clients: LoadClient[], opts: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { statuses: new Map(), hungUp: 0, truncated: 0, failuresByInstance: new Map(), otherErrors: new Map() };
  await Promise.all(
    Array.from({ length: opts.requests }, (_, i) =>
      one(instances[i % instances.length] as Instance, clients[i % clients.length] as LoadClient, i, opts, result),
    ),
  );
  return result;
}
