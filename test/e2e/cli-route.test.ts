/**
 * `svc-gateway route`, run as a real process (bin/svc-gateway.js, the built code): the decision for a
 * prompt and why, as text or JSON, with the operator's or a given quality bias; prompts on stdin.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'svc-route-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], opts: { input?: string; env?: Record<string, string> } = {}) {
  const { SVC_CONFIG: _ignored, ...env } = process.env;
  const r = spawnSync(process.execPath, ['bin/svc-gateway.js', 'route', ...args], {
    env: { ...env, ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Explanation {
  model: string;
  decision: { tier: string; confidence: number; reason: string };
  qualityBias: number;
  fastExitThreshold: number;
  probabilities: Record<string, number>;
  groups: { what: string; toward: Record<string, number> }[];
  terms: { what: string }[];
}

describe('svc-gateway route', () => {
  it('prints the tier, the probabilities and the evidence', () => {
    const r = cli(['Prove that the square root of two is irrational.']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^svc-auto -> svc-smart {2}\(confidence 0\.\d+; .+\)$/m);
    expect(r.stdout).toContain('quality_bias 0.7 (default)');
    expect(r.stdout).toMatch(/probabilities: fast 0\.\d{3} {2}code 0\.\d{3} {2}smart 0\.\d{3}/);
    expect(r.stdout).toContain('proof/logic words');
  });

  it('answers JSON for scripts', () => {
    const r = cli(['Write', 'a', 'Go', 'function', 'that', 'sums', 'a', 'slice', '--json']);
    expect(r.status).toBe(0);
    const x = JSON.parse(r.stdout) as Explanation;
    expect(x.model).toBe('svc-code');
    expect(x.decision.tier).toBe('code');
    expect(x.qualityBias).toBe(0.7);
    const p = x.probabilities;
    expect((p.fast as number) + (p.code as number) + (p.smart as number)).toBeCloseTo(1, 2);
    expect(x.groups.length).toBeGreaterThan(0);
    expect(x.terms.map((t) => t.what)).toContain('go');
  });

  it('takes the quality bias from --quality-bias, else from the configuration', () => {
    const prompt = 'What are the pros and cons of nuclear power?';
    const cheap = JSON.parse(cli([prompt, '--quality-bias', '0', '--json']).stdout) as Explanation;
    const capable = JSON.parse(cli([prompt, '--quality-bias', '1', '--json']).stdout) as Explanation;
    expect(cheap.decision.tier).toBe('fast');
    expect(capable.decision.tier).toBe('smart');

    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        providers: { sandbox: { type: 'sandbox' } },
        aliases: {
          'svc-fast': { targets: [{ provider: 'sandbox', model: 'f' }] },
          'svc-code': { targets: [{ provider: 'sandbox', model: 'c' }] },
          'svc-smart': { targets: [{ provider: 'sandbox', model: 's' }] },
          'svc-auto': { quality_bias: 1 },
        },
      }),
    );
    const configured = cli([prompt], { env: { SVC_CONFIG: config } });
    expect(configured.stdout).toContain(`quality_bias 1 (from ${config})`);
    expect(configured.stdout).toContain('svc-auto -> svc-smart');
  });

  it('reads the prompt from stdin', () => {
    const r = cli(['--json'], { input: 'def add(a, b):\n    return a + b\n\nwhy does this return None sometimes?\n' });
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as Explanation).decision.tier).toBe('code');
  });

  it('refuses a bad quality bias or no prompt with a usage error', () => {
    const bad = cli(['hello', '--quality-bias', '2']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--quality-bias must be a number from 0 to 1');
    const none = cli([]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('usage: svc-gateway route');
  });
});
