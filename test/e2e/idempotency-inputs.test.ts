/** Review probes: odd inputs with an Idempotency-Key must get a 4xx, never a 500 or a hang. */
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;
beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterAll(() => gw.close());

function send(headers: Record<string, string>, body: Buffer | string, chunked = false): Promise<{ status: number; text: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', ...headers, ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.byteLength(body)) }) } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', (e) => resolve({ status: -1, text: String(e) }));
    if (chunked) {
      const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
      for (let i = 0; i < b.length; i += 65536) req.write(b.subarray(i, i + 65536));
      req.end();
    } else req.end(body);
  });
}

const ok = JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 });

it.each([
  ['empty key', { 'idempotency-key': '' }, ok, false],
  ['space in key', { 'idempotency-key': 'a b' }, ok, false],
  ['256-char key', { 'idempotency-key': 'k'.repeat(256) }, ok, false],
  ['255-char key', { 'idempotency-key': 'k'.repeat(255) }, ok, false],
  ['latin1 key', { 'idempotency-key': 'caf\u00e9' }, ok, false],
  ['chunked huge body with key', { 'idempotency-key': 'big-1' }, JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] }), true],
  ['chunked body with key', { 'idempotency-key': 'chunk-1' }, ok, true],
  ['invalid json with key', { 'idempotency-key': 'bad-1' }, '{"model":', false],
  ['stream replay', { 'idempotency-key': 'replay-1' }, JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5, stream: true }), false],
] as const)('%s', async (_name, headers, body, chunked) => {
  const first = await send(headers as Record<string, string>, body, chunked);
  const second = await send(headers as Record<string, string>, body, chunked);
  expect(first.status).toBeLessThan(500);
  expect(second.status).toBeLessThan(500);
}, 30_000);
