// Peer gateways the overhead bench can measure next to the floor, for context (`--peers portkey`): other
// proxies that do the same job without this gateway's auth and metering. Each is installed on demand, at a
// pinned version, into .cache/bench-peers/ (gitignored, and never a dependency of the project: nothing of
// it ships or is tested), and started alone on the core under test, as the floor and the gateway are.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand, startProcess } from './processes.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PEERS_DIR = join(ROOT, '.cache/bench-peers');

/**
 * Every peer: the exact packages it is installed with, how it starts, and the headers each request to it
 * carries. Pinned versions, so two runs months apart measure the same code.
 */
export const PEERS = {
  portkey: {
    packages: {
      '@portkey-ai/gateway': '1.15.2',
      // Portkey asks for @hono/node-server ^1.3.3, which resolves to 1.19.x today. From 1.14.2 on, a
      // streamed Response built over a fetch() answer keeps that answer's immutable Headers; Portkey then
      // appends its x-portkey-* headers to them, throws "TypeError: immutable" and answers every
      // stream: true request with a 500 (Portkey-AI/gateway#1389; non-streaming answers are unaffected).
      // 1.14.1 is the last release that works, and @hono/node-ws 1.2.0 the last that accepts it as a peer.
      '@hono/node-server': '1.14.1',
      '@hono/node-ws': '1.2.0',
    },
    entry: 'node_modules/@portkey-ai/gateway/build/start-server.js',
    // Portkey reads only `--port=N` (not `--port N`) and prints the port it was given, so port 0 cannot
    // be used: the bench picks a free port first. --headless leaves out the web UI and its log stream.
    args: (port) => [`--port=${port}`, '--headless'],
    // Printed about a second after it listens, once its start-up spinner is done.
    ready: (line) => line.includes('Ready for connections'),
    // Portkey's OpenAI provider against a custom host: it posts to `${customHost}/chat/completions` with
    // the client's body unchanged (checked byte for byte against the floor's upstream call), so the bench
    // upstream answers it exactly as it answers the floor. No key is sent: it forwards "Bearer undefined",
    // which the bench upstream ignores, and does no auth of its own.
    headers: (upstreamPort) => ({
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `http://127.0.0.1:${upstreamPort}/v1`,
    }),
  },
};

function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/** Installs a peer's pinned packages into PEERS_DIR unless exactly those versions are there already. */
export function installPeer(name) {
  const peer = PEERS[name];
  const specs = Object.entries(peer.packages).map(([pkg, version]) => `${pkg}@${version}`);
  if (Object.entries(peer.packages).every(([pkg, version]) => installedVersion(pkg) === version)) return;
  console.log(`installing ${specs.join(' ')} into ${PEERS_DIR}`);
  // --ignore-scripts: Portkey's only install script is patch-package, and the package ships no patches.
  runCommand('npm', ['install', '--prefix', PEERS_DIR, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', ...specs]);
  for (const [pkg, version] of Object.entries(peer.packages)) {
    if (installedVersion(pkg) !== version) throw new Error(`${name}: ${pkg}@${version} did not install (found ${installedVersion(pkg)})`);
  }
}

/** A port nothing listens on right now, for a peer that cannot listen on port 0 and report it. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts an installed peer in front of the bench upstream, pinned to the core under test. Returns the
 * process (as startProcess does) and the headers its requests must carry.
 */
export async function startPeer(name, plan, upstreamPort, nodeArgs = []) {
  const peer = PEERS[name];
  const port = await freePort();
  const proc = await startProcess({
    name,
    plan,
    core: plan.underTest ?? null,
    command: process.execPath,
    args: [...nodeArgs, join(PEERS_DIR, peer.entry), ...peer.args(port)],
    readyPort: (line) => (peer.ready(line) ? port : null),
  });
  return { proc, headers: peer.headers(upstreamPort) };
}

/**
 * What a chat-completions answer says, streamed or not: status, whether it streamed, the content and
 * the completion tokens (from the usage chunk when streamed).
 */
async function answerOf(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  const streamed = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const answer = { status: res.status, streamed, content: '', completionTokens: null, text };
  if (res.status !== 200) return answer;
  if (!streamed) {
    const json = JSON.parse(text);
    return { ...answer, content: json.choices?.[0]?.message?.content ?? '', completionTokens: json.usage?.completion_tokens ?? null };
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice('data: '.length));
    answer.content += chunk.choices?.[0]?.delta?.content ?? '';
    if (chunk.usage) answer.completionTokens = chunk.usage.completion_tokens;
  }
  return answer;
}

/**
 * Before a peer is measured: one request per mode through it and one straight to the upstream, which must
 * agree on status 200, streaming, content and tokens. The load generator only sees statuses, and a peer
 * that answered 200 with an error or an empty body would otherwise be measured as fast. Returns the
 * problems found, empty when none.
 */
export async function checkPeerAnswers(port, headers, bodies, upstreamPort) {
  const problems = [];
  for (const [mode, body] of Object.entries(bodies)) {
    const direct = await answerOf(`http://127.0.0.1:${upstreamPort}/v1/chat/completions`, {}, body);
    const peer = await answerOf(`http://127.0.0.1:${port}/v1/chat/completions`, headers, body);
    if (peer.status !== 200) problems.push(`${mode}: status ${peer.status}: ${peer.text.slice(0, 300)}`);
    else if (peer.streamed !== direct.streamed) problems.push(`${mode}: streamed ${peer.streamed}, the upstream ${direct.streamed}`);
    else if (peer.content !== direct.content || peer.completionTokens !== direct.completionTokens) {
      problems.push(`${mode}: content ${JSON.stringify(peer.content)} (${peer.completionTokens} tokens), the upstream's ${JSON.stringify(direct.content)} (${direct.completionTokens})`);
    } else if (direct.content === '') problems.push(`${mode}: the upstream's answer has no content`);
  }
  return problems;
}
