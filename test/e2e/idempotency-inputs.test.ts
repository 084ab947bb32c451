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

/** POST to a door of the gateway (`/messages`, `/chat/completions`) with an Idempotency-Key. */
async function post(path: string, key: string, body: string): Promise<{ status: number; replayed: string | null; json: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': key },
    body,
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), json: (await res.json()) as Record<string, unknown> };
}

// A body both doors take: Anthropic's Messages and OpenAI's chat completions share these three fields.
const both = JSON.stringify({ model: 'svc-fast', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] });

it.each([
  ['/messages', '/chat/completions'],
  ['/chat/completions', '/messages'],
] as const)('one Idempotency-Key on %s then %s: the second door is never answered in the first door\'s shape', async (firstDoor, secondDoor) => {
  // Before, the fingerprint was the body alone: the second door found a completed request with the same
  // fingerprint and replayed it, an Anthropic message to an OpenAI client (or the reverse). The key is now
  // scoped by door: the same body there is another request, so the key's reuse is refused (409), as with any
  // other body, charging nothing.
  const key = `two-doors-${firstDoor.slice(1, 5)}`;
  // What each door answers in: Anthropic's message, OpenAI's chat.completion.
  const shapeOf = (json: Record<string, unknown>): unknown => (json.type === 'message' ? '/messages' : json.object === 'chat.completion' ? '/chat/completions' : json);
  const first = await post(firstDoor, key, both);
  expect(first.status).toBe(200);
  expect(shapeOf(first.json)).toBe(firstDoor);
  const balance = await gw.store.ledger.balance(seeded.accountId, 'live');

  const second = await post(secondDoor, key, both);
  expect(second.replayed, `a replay to ${secondDoor}: ${JSON.stringify(second.json)}`).toBeNull();
  if (second.status === 200) expect(shapeOf(second.json), 'the shape of the answer').toBe(secondDoor);
  expect(second.status).toBe(409);
  // The refusal in the second door's own envelope.
  if (secondDoor === '/messages') {
    expect(second.json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('Idempotency-Key') } });
  } else {
    expect(second.json).toMatchObject({ error: { type: 'invalid_request_error', code: 'idempotency_key_reused' } });
  }
  expect(await gw.store.ledger.balance(seeded.accountId, 'live')).toEqual(balance);

  // The first door still replays its own answer, in its own shape.
  const again = await post(firstDoor, key, both);
  expect(again.status).toBe(200);
  expect(again.replayed).toBe('true');
  expect(again.json).toEqual(first.json);
  expect(await gw.store.ledger.balance(seeded.accountId, 'live')).toEqual(balance);
});
