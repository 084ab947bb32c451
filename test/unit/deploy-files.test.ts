/**
 * The packaging files (docs/deploy.md) hold what matters, checked without a Docker daemon or a cluster:
 * the Dockerfile (parsed by lines), compose.yaml and deploy/kubernetes/*.yaml (parsed with `yaml`), and the
 * gateway configs they carry (validated with the gateway's own schema).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig, type GatewayConfig } from '../../src/config/schema.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** Seconds the gateway may take to stop after SIGTERM, beyond its grace: settle 10 s + flush 2 s (docs/operations.md). */
const SETTLE_AND_FLUSH_S = 12;

// ---------------------------------------------------------------------------------------------------------
// Dockerfile, by lines

interface Instruction {
  op: string;
  args: string;
  line: number;
}
interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

/** Logical instructions: comments dropped (also inside continuations, as Docker does), `\` lines joined. */
function parseDockerfile(text: string): { globalArgs: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | null = null;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === null)) return;
    const continued = line.endsWith('\\');
    const body = continued ? line.slice(0, -1).trim() : line;
    pending = pending ? { text: `${pending.text} ${body}`, line: pending.line } : { text: body, line: i + 1 };
    if (!continued) {
      const m = /^(\S+)\s*(.*)$/.exec(pending.text);
      if (m) instructions.push({ op: (m[1] as string).toUpperCase(), args: (m[2] as string).trim(), line: pending.line });
      pending = null;
    }
  });
  const globalArgs: Instruction[] = [];
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`Dockerfile line ${ins.line}: cannot read FROM ${ins.args}`);
      stages.push({ image: m[1] as string, name: m[2] ?? null, instructions: [] });
    } else if (stages.length === 0) {
      if (ins.op !== 'ARG') throw new Error(`Dockerfile line ${ins.line}: ${ins.op} before the first FROM`);
      globalArgs.push(ins);
    } else {
      (stages[stages.length - 1] as Stage).instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

/** ENV key=value pairs (the legacy `ENV key value` form too), quotes removed. */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of stage.instructions.filter((i) => i.op === 'ENV')) {
    if (!ins.args.includes('=')) {
      const [k, ...v] = ins.args.split(/\s+/);
      env[k as string] = v.join(' ');
      continue;
    }
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|'([^']*)'|\S*)/g)) {
      env[m[1] as string] = m[3] ?? m[4] ?? (m[2] as string);
    }
  }
  return env;
}

function only(stage: Stage, op: string): Instruction[] {
  return stage.instructions.filter((i) => i.op === op);
}

/** COPY/ADD sources and flags: `COPY [--from=x] [--chown=..] src... dest`. */
function copies(stage: Stage): { from: string | null; sources: string[]; dest: string; line: number }[] {
  return only(stage, 'COPY').map((ins) => {
    const words = ins.args.startsWith('[') ? (JSON.parse(ins.args) as string[]) : ins.args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length) ?? null;
    return { from, sources: paths.slice(0, -1), dest: paths[paths.length - 1] as string, line: ins.line };
  });
}

function execForm(ins: Instruction | undefined, what: string): string[] {
  expect(ins, `${what} missing`).toBeDefined();
  const args = (ins as Instruction).args.replace(/^CMD\s+/i, '');
  expect(args.startsWith('['), `${what} must be in exec form (JSON array), so the process gets SIGTERM itself`).toBe(true);
  return JSON.parse(args) as string[];
}

describe('Dockerfile', () => {
  const { globalArgs, stages } = parseDockerfile(read('Dockerfile'));
  const runtime = stages[stages.length - 1] as Stage;
  const build = stages.find((s) => s.name !== null && runtime.instructions.some((i) => i.args.includes(`--from=${s.name}`)));
  const dockerignore = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  it('is multi-stage on an official node image, the build stage applying the patches and building', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const argDefaults = Object.fromEntries(globalArgs.map((a) => a.args.split('=') as [string, string]));
    for (const s of stages) {
      const image = s.image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => argDefaults[(a ?? b) as string] ?? '');
      expect(image).toMatch(/^node:2[2-9][\w.-]*$/);
    }
    expect(build, 'the runtime stage copies from a named build stage').toBeDefined();
    const runs = only(build as Stage, 'RUN').map((i) => i.args);
    const all = runs.join('\n');
    expect(all).toMatch(/npm ci/);
    expect(all).toMatch(/patch-package/);
    expect(all).toMatch(/npm run build/);
    expect(all).toMatch(/--omit=dev/);
    // patch-package (postinstall) needs patches/ before it runs; the build (prepare) needs src/ first.
    const order = (build as Stage).instructions;
    const at = (pred: (i: Instruction) => boolean): number => order.findIndex(pred);
    expect(at((i) => i.op === 'COPY' && /\bpatches\b/.test(i.args))).toBeLessThan(at((i) => i.op === 'RUN' && /patch-package|npm ci(?!.*--ignore-scripts)/.test(i.args)));
    expect(at((i) => i.op === 'COPY' && /\bsrc\b/.test(i.args))).toBeLessThan(at((i) => i.op === 'RUN' && /npm run build/.test(i.args)));
  });

  it('copies only what exists in the build context and is not ignored', () => {
    for (const s of stages) {
      for (const c of copies(s).filter((c) => c.from === null)) {
        for (const src of c.sources) {
          expect(existsSync(join(root, src)), `Dockerfile line ${c.line}: ${src} does not exist`).toBe(true);
          expect(dockerignore, `Dockerfile line ${c.line}: ${src} is excluded by .dockerignore`).not.toContain(src.replace(/^\.\//, '').replace(/\/$/, ''));
        }
      }
    }
    // The context leaves out what would bloat it or leak local state.
    for (const p of ['node_modules', 'dist', '.git', 'data']) expect(dockerignore).toContain(p);
  });

  it('runtime stage: only what runs, as a non-root USER, production env, SQLite on a volume', () => {
    const sources = copies(runtime).flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '').replace(/^\.\//, '').replace(/\/$/, '')));
    for (const s of sources) expect(['package.json', 'node_modules', 'dist', 'bin', 'patches']).toContain(s);
    for (const needed of ['package.json', 'node_modules', 'dist', 'bin']) expect(sources).toContain(needed);

    const users = only(runtime, 'USER');
    expect(users.length, 'runtime stage sets USER').toBeGreaterThan(0);
    const user = (users[users.length - 1] as Instruction).args.split(':')[0];
    expect(['root', '0']).not.toContain(user);
    const userAt = runtime.instructions.indexOf(users[users.length - 1] as Instruction);
    for (const op of ['ENTRYPOINT', 'CMD', 'HEALTHCHECK']) {
      const i = runtime.instructions.findIndex((x) => x.op === op);
      if (i !== -1) expect(i, `${op} runs as the USER`).toBeGreaterThan(userAt);
    }

    const env = envOf(runtime);
    expect(env.NODE_ENV).toBe('production');
    const volumes = only(runtime, 'VOLUME').flatMap((v) => (v.args.startsWith('[') ? (JSON.parse(v.args) as string[]) : v.args.split(/\s+/)));
    expect(volumes.length).toBeGreaterThan(0);
    const dbPath = (env.SVC_DATABASE_URL ?? '').replace(/^sqlite:/, '');
    expect(env.SVC_DATABASE_URL).toMatch(/^sqlite:\//);
    const volume = volumes.find((v) => dbPath.startsWith(v.replace(/\/$/, '') + '/'));
    expect(volume, `SVC_DATABASE_URL (${env.SVC_DATABASE_URL}) lies in a VOLUME (${volumes.join(', ')})`).toBeDefined();
    // The volume directory is created owned by the user before VOLUME (Docker copies its ownership).
    const chown = only(runtime, 'RUN').some((r) => r.args.includes(`chown ${user}`) && r.args.includes(volume as string));
    expect(chown, `${volume} owned by ${user}`).toBe(true);
  });

  it('exposes the PORT it listens on, health-checks /healthz with node, runs node in exec form, stops on SIGTERM', () => {
    const env = envOf(runtime);
    const exposed = only(runtime, 'EXPOSE').flatMap((e) => e.args.split(/\s+/).map((p) => p.replace(/\/tcp$/, '')));
    expect(env.PORT).toMatch(/^\d+$/);
    expect(exposed).toContain(env.PORT);

    const hc = only(runtime, 'HEALTHCHECK');
    expect(hc).toHaveLength(1);
    const cmd = execForm({ ...(hc[0] as Instruction), args: (hc[0] as Instruction).args.replace(/^(--\S+\s+)*/, '') }, 'HEALTHCHECK CMD');
    expect(cmd[0]).toBe('node');
    expect(cmd.join(' ')).toContain('/healthz');
    expect(cmd.join(' ')).toMatch(/process\.env\.PORT/);
    expect(cmd.join(' ')).not.toMatch(/\b(curl|wget)\b/);

    const entry = [...execForm(only(runtime, 'ENTRYPOINT').at(-1), 'ENTRYPOINT'), ...execForm(only(runtime, 'CMD').at(-1), 'CMD')];
    expect(entry).toEqual(['node', 'bin/svc-gateway.js', 'serve']);
    expect(only(runtime, 'STOPSIGNAL').at(-1)?.args).toBe('SIGTERM');
  });
});

// ---------------------------------------------------------------------------------------------------------
// compose.yaml

type Json = Record<string, unknown>;
const obj = (v: unknown, what: string): Json => {
  expect(v, what).toBeTypeOf('object');
  expect(v, what).not.toBeNull();
  return v as Json;
};

/** Compose durations ("35s", "1m30s") in seconds. */
function seconds(d: string): number {
  let total = 0;
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms|us)/g)) {
    total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001, us: 0.000001 }[m[2] as 'h' | 'm' | 's' | 'ms' | 'us'];
  }
  return total;
}

describe('compose.yaml', () => {
  // merge: the gateways share one definition through a YAML merge key, as Compose reads it.
  const compose = obj(parse(read('compose.yaml'), { merge: true }), 'compose.yaml');
  const services = obj(compose.services, 'services');
  const gateways = Object.entries(services).filter(([, s]) => (s as Json).build !== undefined) as [string, Json][];

  it('has PostgreSQL 17 and Redis 7, each with a healthcheck', () => {
    const postgres = obj(services.postgres, 'services.postgres');
    const redis = obj(services.redis, 'services.redis');
    expect(postgres.image).toMatch(/^postgres:17/);
    expect(redis.image).toMatch(/^redis:7/);
    for (const s of [postgres, redis]) expect((obj(s.healthcheck, 'healthcheck').test as string[]).length).toBeGreaterThan(0);
  });

  it('runs three gateways built from the Dockerfile, started once both are healthy, sharing them', () => {
    const replicas = gateways.reduce((n, [, g]) => n + Number((g.deploy as Json | undefined)?.replicas ?? 1), 0);
    expect(replicas).toBeGreaterThanOrEqual(3);
    for (const [name, g] of gateways) {
      const build = g.build as string | Json;
      const context = typeof build === 'string' ? build : ((build.context as string | undefined) ?? '.');
      expect(existsSync(join(root, context, typeof build === 'string' ? 'Dockerfile' : ((build.dockerfile as string | undefined) ?? 'Dockerfile')))).toBe(true);
      const deps = obj(g.depends_on, `${name}.depends_on`);
      for (const dep of ['postgres', 'redis']) expect(obj(deps[dep], `${name} depends on ${dep}`).condition).toBe('service_healthy');
      const env = obj(g.environment, `${name}.environment`);
      expect(env.SVC_DATABASE_URL).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
      expect(env.SVC_REDIS_URL).toMatch(/^redis:\/\/([^@]*@)?redis(:6379)?(\/\d+)?$/);
      // docker stop must not SIGKILL a draining gateway.
      expect(seconds(g.stop_grace_period as string)).toBeGreaterThanOrEqual(20 + SETTLE_AND_FLUSH_S);
    }
    // Distinct host ports, if published.
    const ports = gateways.flatMap(([, g]) => (g.ports as string[] | undefined) ?? []);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('mounts a valid gateway config where SVC_CONFIG points', () => {
    const configs = obj(compose.configs, 'configs');
    for (const [name, g] of gateways) {
      const env = obj(g.environment, `${name}.environment`);
      const mount = (g.configs as Json[]).find((c) => c.target === env.SVC_CONFIG);
      expect(mount, `${name}: a config is mounted at SVC_CONFIG (${String(env.SVC_CONFIG)})`).toBeDefined();
      const entry = obj(configs[(mount as Json).source as string], 'the mounted config');
      const text = typeof entry.content === 'string' ? entry.content : read(entry.file as string);
      const config = parseConfig(parse(text));
      expect(Object.keys(config.aliases).sort()).toEqual(['svc-auto', 'svc-code', 'svc-fast', 'svc-smart']);
      // Its provider keys are passed to the gateways.
      for (const p of Object.values(config.providers)) {
        if ('api_key_env' in p && p.api_key_env) expect(Object.keys(env)).toContain(p.api_key_env);
      }
      expect(seconds(g.stop_grace_period as string)).toBeGreaterThanOrEqual(config.server.shutdown_grace_ms / 1000 + SETTLE_AND_FLUSH_S);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// deploy/kubernetes/

interface Container {
  name: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  livenessProbe?: { httpGet?: { path: string; port: number | string } };
  readinessProbe?: { httpGet?: { path: string; port: number | string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  volumes?: { name: string; emptyDir?: Json; configMap?: { name: string; items?: { key: string; path: string }[] } }[];
}
interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Json;
  data?: Record<string, string>;
}

const k8sDir = join(root, 'deploy', 'kubernetes');
const manifests: { file: string; m: Manifest }[] = readdirSync(k8sDir)
  .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(k8sDir, file), 'utf8')).map((d) => {
      expect(d.errors, file).toEqual([]);
      return { file, m: d.toJS() as Manifest };
    }),
  );
const ofKind = (kind: string): Manifest[] => manifests.filter((x) => x.m.kind === kind).map((x) => x.m);
const deployments = ofKind('Deployment');
const podOf = (d: Manifest): { labels: Record<string, string>; spec: PodSpec } => {
  const t = (d.spec as { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } }).template;
  return { labels: t.metadata.labels, spec: t.spec };
};
const selects = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The gateway config a container reads: the ConfigMap mounted where its SVC_CONFIG points. */
function configOf(c: Container, pod: PodSpec): GatewayConfig {
  const path = c.env?.find((e) => e.name === 'SVC_CONFIG')?.value;
  expect(path, `${c.name}: SVC_CONFIG`).toBeDefined();
  const mount = c.volumeMounts?.find((vm) => (path as string).startsWith(vm.mountPath.replace(/\/$/, '') + '/'));
  expect(mount, `${c.name}: SVC_CONFIG ${path} lies in a volume mount`).toBeDefined();
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  expect(volume?.configMap, `${c.name}: ${mount?.mountPath} is a ConfigMap`).toBeDefined();
  const file = (path as string).slice((mount as { mountPath: string }).mountPath.replace(/\/$/, '').length + 1);
  const key = volume?.configMap?.items?.find((i) => i.path === file)?.key ?? file;
  const cm = ofKind('ConfigMap').find((x) => x.metadata.name === volume?.configMap?.name);
  expect(cm?.data?.[key], `ConfigMap ${volume?.configMap?.name} has ${key}`).toBeDefined();
  return parseConfig(parse(cm?.data?.[key] as string));
}

describe('deploy/kubernetes', () => {
  it('lists its manifests in kustomization.yaml (the optional HPA aside)', () => {
    const k = parse(readFileSync(join(k8sDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const r of k.resources) expect(existsSync(join(k8sDir, r)), r).toBe(true);
    for (const { file } of manifests) if (file !== 'hpa.yaml') expect(k.resources).toContain(file);
    expect(deployments.length).toBeGreaterThan(0);
  });

  it.each(deployments.map((d) => [d.metadata.name, d] as const))('Deployment %s: probes, resources, non-root, read-only root, drain', (_, d) => {
    const { labels, spec } = podOf(d);
    expect(selects((d.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, labels)).toBe(true);
    for (const c of spec.containers) {
      const ports = c.ports ?? [];
      const portOk = (p: number | string): boolean => ports.some((x) => x.name === p || x.containerPort === p);
      expect(c.livenessProbe?.httpGet?.path, `${c.name} liveness`).toBe('/healthz');
      expect(c.readinessProbe?.httpGet?.path, `${c.name} readiness`).toBe('/readyz');
      for (const probe of [c.livenessProbe, c.readinessProbe]) expect(portOk(probe?.httpGet?.port as number | string)).toBe(true);
      // The probed port is the one the gateway listens on.
      const port = Number(c.env?.find((e) => e.name === 'PORT')?.value ?? 8080);
      const probed = ports.find((x) => x.name === c.readinessProbe?.httpGet?.port || x.containerPort === c.readinessProbe?.httpGet?.port);
      expect(probed?.containerPort).toBe(port);

      for (const kind of ['requests', 'limits'] as const) {
        expect(c.resources?.[kind]?.cpu, `${c.name} ${kind}.cpu`).toBeDefined();
        expect(c.resources?.[kind]?.memory, `${c.name} ${kind}.memory`).toBeDefined();
      }

      const nonRoot = c.securityContext?.runAsNonRoot ?? spec.securityContext?.runAsNonRoot;
      expect(nonRoot, `${c.name} runAsNonRoot`).toBe(true);
      const uid = c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
      // The image's USER is a name (node): the kubelet can verify runAsNonRoot only with a numeric uid.
      expect(uid, `${c.name} runAsUser`).toBeGreaterThan(0);
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
      const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(spec.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, `${c.name}: /tmp is an emptyDir`).toBeDefined();

      // SIGKILL only after preStop + the gateway's drain (its configured grace + settle and flush).
      const config = configOf(c, spec);
      const preStop = c.lifecycle?.preStop;
      expect(preStop, `${c.name} preStop`).toBeDefined();
      const preStopS = preStop?.sleep?.seconds ?? Number(preStop?.exec?.command.at(-1));
      expect(preStopS).toBeGreaterThan(0);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(20);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStopS + config.server.shutdown_grace_ms / 1000 + SETTLE_AND_FLUSH_S);

      // Secrets come from a Secret, never inline: every provider key the config names, the admin token, the database.
      const fromSecret = (name: string): boolean => c.env?.some((e) => e.name === name && e.value === undefined && e.valueFrom?.secretKeyRef !== undefined) ?? false;
      for (const p of Object.values(config.providers)) {
        if ('api_key_env' in p && p.api_key_env) expect(fromSecret(p.api_key_env), `${c.name}: ${p.api_key_env} from a Secret`).toBe(true);
      }
      for (const name of ['SVC_ADMIN_TOKEN', 'SVC_DATABASE_URL', 'SVC_REDIS_URL']) expect(fromSecret(name), `${c.name}: ${name} from a Secret`).toBe(true);
    }
  });

  it('PodDisruptionBudget and Service select the Deployment pods; the Service targets a declared port', () => {
    const pdbs = ofKind('PodDisruptionBudget');
    expect(pdbs.length).toBeGreaterThan(0);
    for (const pdb of pdbs) {
      const sel = (pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
      expect(deployments.some((d) => selects(sel, podOf(d).labels)), `PDB ${pdb.metadata.name}`).toBe(true);
      const spec = pdb.spec as { minAvailable?: unknown; maxUnavailable?: unknown };
      expect(spec.minAvailable ?? spec.maxUnavailable).toBeDefined();
    }
    for (const svc of ofKind('Service')) {
      const spec = svc.spec as { selector: Record<string, string>; ports: { targetPort: string | number }[] };
      const d = deployments.find((x) => selects(spec.selector, podOf(x).labels));
      expect(d, `Service ${svc.metadata.name} selects a Deployment`).toBeDefined();
      const declared = podOf(d as Manifest).spec.containers.flatMap((c) => c.ports ?? []);
      for (const p of spec.ports) expect(declared.some((x) => x.name === p.targetPort || x.containerPort === p.targetPort)).toBe(true);
    }
    for (const hpa of ofKind('HorizontalPodAutoscaler')) {
      const ref = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
      expect(deployments.map((d) => d.metadata.name)).toContain(ref.name);
    }
  });
});
