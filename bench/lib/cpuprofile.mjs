// Reads a V8 .cpuprofile (what `node --cpu-prof` writes): nodes (a call tree, each with its callFrame),
// samples (the node on top of the stack at each tick) and timeDeltas (microseconds since the previous
// sample). Self time of a function = the time of the samples whose top frame is one of its nodes.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** Where a frame's code lives, for grouping: our source, a dependency, Node's internals, or V8's own. */
function origin(url, root) {
  if (!url) return 'v8/native';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  return relative(root, path) || path;
}

export function summarizeProfile(file, root) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    totalUs += dt;
  });

  const functions = new Map();
  const origins = new Map();
  for (const [id, us] of selfUs) {
    const { callFrame: f } = byId.get(id);
    const where = origin(f.url, root);
    const name = f.functionName || (f.url ? '(anonymous)' : '(native)');
    const special = name.startsWith('(') && !f.url; // (idle), (program), (garbage collector)
    const key = special ? name : `${name} ${where}:${f.lineNumber + 1}`;
    const fn = functions.get(key) ?? { function: name, location: special ? '' : `${where}:${f.lineNumber + 1}`, selfUs: 0 };
    fn.selfUs += us;
    functions.set(key, fn);
    const o = special ? name : where.startsWith('dist/') ? where.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts') : where;
    origins.set(o, (origins.get(o) ?? 0) + us);
  }
  // Inclusive time (the function and what it called) of the project's own functions, each counted once per
  // stack even when it recurses or re-enters: what each step of the request lifecycle costs in total.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownKey = (n) => {
    const where = origin(n.callFrame.url, root);
    return where.startsWith('dist/') ? `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}` : null;
  };
  const inclusive = new Map();
  for (const [id, us] of selfUs) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = ownKey(byId.get(at));
      if (key === null || seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const idleUs = functions.get('(idle)')?.selfUs ?? 0;
  const busyUs = totalUs - idleUs;
  const pct = (us) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    functions: [...functions.values()]
      .filter((f) => f.function !== '(idle)')
      .sort((a, b) => b.selfUs - a.selfUs)
      .map((f) => ({ ...f, selfMs: f.selfUs / 1000, percentOfBusy: pct(f.selfUs) })),
    ownInclusive: [...inclusive.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([fn, us]) => ({ function: fn, inclusiveMs: us / 1000, percentOfBusy: pct(us) })),
    origins: [...origins.entries()]
      .filter(([o]) => o !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .map(([o, us]) => ({ origin: o, selfMs: us / 1000, percentOfBusy: pct(us) })),
  };
}
