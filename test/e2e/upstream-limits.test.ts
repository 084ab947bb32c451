/**
 * Hostile upstreams against the real gateway: a real HTTP upstream that answers 100 MB (as a stream of SSE
 * padding, or as one JSON answer that never ends) and one that streams text past `max_tokens` without end.
 * Each attempt is ended at the byte cap (or the output bound) as an upstream failure: the secondary answers
 * or continues, the gateway reads a bounded number of bytes, and its memory stays bounded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const MB = 1024 * 1024;
const CAP = 1 * MB;
const FLOOD = 100 * MB;

type Mode = 'sse-padding' | 'json-100mb' | 'endless-text';

/** A real upstream that answers with `mode`, and counts the bytes it managed to hand to the socket. */
class HostileUpstream {
  mode: Mode = 'sse-padding';
  written = 0;
  finished: Promise<void> = Promise.resolve();
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => this.answer(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    this.written = 0;
    const json = this.mode === 'json-100mb';
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'text/event-stream' });
    const piece = Buffer.from(this.piece());
    const head = json ? Buffer.from('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"') : null;
    this.finished = new Promise((resolve) => {
      let closed = false;
      res.on('close', () => {
        closed = true;
        resolve();
      });
      const pump = (): void => {
        if (head !== null && this.written === 0) this.push(res, head);
        // Respect backpressure: a reader that stops reading stops this writer, as a real server would be.
        while (!closed && this.written < FLOOD) {
          if (!this.push(res, piece)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!closed) res.end();
      };
      pump();
    });
  }

  private push(res: ServerResponse, bytes: Buffer): boolean {
    this.written += bytes.length;
    return res.write(bytes);
  }

  /** 64 KiB of whatever this mode repeats. */
  private piece(): string {
    switch (this.mode) {
      case 'json-100mb':
        return 'A'.repeat(64 * 1024);
      case 'sse-padding':
        // SSE comments: what a keepalive looks like, and no output at all (so only the byte cap can end it).
        return `: ${'p'.repeat(1022)}\n\n`.repeat(64);
      case 'endless-text': {
        const chunk = JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'word ' }, finish_reason: null }] });
        const event = `data: ${chunk}\n\n`;
        return event.repeat(Math.floor((64 * 1024) / event.length));
      }
    }
  }
}

let hostile: HostileUpstream;
let secondary: SandboxServer;
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  hostile = new HostileUpstream();
  const hostileUrl = await hostile.listen();
  secondary = await startSandboxServer({ port: 0, pace: { timeToFirstTokenMs: 0, tokensPerSecond: 0 } });
  const targets = [
    { provider: 'hostile', model: 'm-hostile' },
    { provider: 'secondary', model: 'm-secondary' },
  ];
  const config = parseConfig({
    server: { max_upstream_response_bytes: CAP },
    // Every case must meet the hostile primary; breakers are tested elsewhere.
    health: { failure_threshold: 1_000 },
    providers: {
      hostile: { type: 'openai-compatible', base_url: hostileUrl, paid: false },
      secondary: { type: 'openai-compatible', base_url: secondary.url, paid: false },
    },
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  gw = await startTestGateway({ config });
  seeded = await gw.seed({ purchased: 1_000_000 });
});

afterAll(async () => {
  await gw.close();
  await secondary.close();
  await hostile.close();
});

interface Svc {
  routed_provider: string;
  attempts?: { provider: string; outcome: string; continuation?: boolean }[];
}

/** The gateway's count of the hostile upstream's attempts that ended as malformed answers (`protocol`). */
async function hostileProtocolAttempts(): Promise<number> {
  const text = await (await fetch(`${new URL(gw.url).origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('svc_upstream_attempts_total{') && l.includes('provider="hostile"') && l.includes('outcome="protocol"'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** Runs `work` while sampling this process's RSS (the gateway runs in it) every 5 ms; returns the peak growth. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

const request = (stream: boolean) => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content: 'Say something.' }],
  max_tokens: 30,
  stream,
});

async function svcOf(res: Response, stream: boolean): Promise<{ svc: Svc; text: string }> {
  if (!stream) {
    const body = (await res.json()) as { svc: Svc; choices: { message: { content: string } }[] };
    return { svc: body.svc, text: body.choices[0]?.message.content ?? '' };
  }
  const data = sseData(await res.text());
  expect(data.at(-1)).toBe('[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { svc?: Svc; choices: { delta: { content?: string } }[] });
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  return { svc: chunks.at(-1)?.svc as Svc, text };
}

describe.each([false, true])('stream=%s', (stream) => {
  it.each([['sse-padding'], ['json-100mb']] as const)(
    'an upstream answering 100 MB (%s) is cut at the byte cap and the secondary answers; memory bounded',
    async (mode) => {
      hostile.mode = mode;
      const { result, growth } = await peakRssGrowth(async () => {
        const res = await chat(gw, seeded.secret, request(stream));
        expect(res.status).toBe(200);
        return svcOf(res, stream);
      });
      await hostile.finished;
      expect(result.svc.routed_provider).toBe('secondary');
      expect(result.svc.attempts?.map((a) => `${a.provider}:${a.outcome}`)).toEqual(['hostile:protocol', 'secondary:ok']);
      // The gateway stopped reading at the cap: what the upstream got into the socket is the cap plus the
      // kernel's buffers, nowhere near the 100 MB it meant to send.
      expect(hostile.written).toBeLessThan(CAP + 16 * MB);
      expect(growth).toBeLessThan(64 * MB);
      expect(await gw.store.ledger.countPendingHolds()).toBe(0);
    },
  );

  it('an upstream streaming text past max_tokens without end is cut at the output bound', async () => {
    hostile.mode = 'endless-text';
    const cutBefore = await hostileProtocolAttempts();
    const res = await chat(gw, seeded.secret, request(stream));
    expect(res.status).toBe(200);
    const { svc, text } = await svcOf(res, stream);
    await hostile.finished;
    expect(svc.routed_provider).toBe('secondary');
    expect(svc.attempts?.map((a) => `${a.provider}:${a.outcome}`)).toEqual(['hostile:protocol', 'secondary:ok']);
    if (stream) {
      // The client already held the hostile text: the secondary continued it, and the whole stays bounded
      // by the output allowance (4 x 30 + 1,024 estimated tokens, about 3.4 KB).
      expect(svc.attempts?.[1]?.continuation).toBe(true);
      expect(text.startsWith('word word')).toBe(true);
    } else {
      // A non-streaming client saw nothing: the secondary's answer replaced it whole.
      expect(text).not.toContain('word word');
    }
    expect(text.length).toBeLessThan(8 * 1024);
    expect(hostile.written).toBeLessThan(16 * MB);
    // The attempt's metric says why it ended, as its svc record does (the bound is checked by failover,
    // which tells the attempt's observation).
    expect(await hostileProtocolAttempts()).toBe(cutBefore + 1);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });
});
