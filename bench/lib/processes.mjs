// Child processes of the bench: started pinned to a core (taskset) when the machine allows it, ready once
// they print their port, measured from /proc (CPU time, RSS, peak RSS) and stopped by their own pid.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout?.trim()) || 100;
})();

/**
 * Which cores the system under test and the load generator get. With taskset and two cores or more: the
 * process under test alone on core 0, the load generator and the upstream on core 1. Otherwise nothing is
 * pinned and the figures are less stable; said once, loudly.
 */
export function corePlan() {
  const cores = availableParallelism();
  const taskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  if (!taskset) return { pinned: false, cores, note: 'taskset not found: processes are not pinned to cores (install util-linux)' };
  if (cores < 2) return { pinned: false, cores, note: 'one core only: the gateway and the load generator share it' };
  return { pinned: true, cores, underTest: '0', load: '1', note: null };
}

/** The command line, prefixed with taskset when pinning; taskset execs, so the pid is the program's own. */
export function pinned(plan, core, command, args) {
  return plan.pinned && core !== null ? { command: 'taskset', args: ['-c', core, command, ...args] } : { command, args };
}

/**
 * Starts a long-running child (in `cwd`, default this process's) and resolves once `readyPort(line)` finds
 * its port in a stdout line. Its stderr is kept (last 8 KB) for the error message if it dies.
 */
export async function startProcess({ name, plan, core = null, command, args, env = {}, cwd = undefined, readyPort, timeoutMs = 30_000 }) {
  const cmd = pinned(plan, core, command, args);
  const child = spawn(cmd.command, cmd.args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-8192);
  });
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exited = { code, signal }))));
  const port = await new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${name}: not ready after ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buffered += d;
      let nl;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const p = readyPort(line);
        if (p !== null) {
          clearTimeout(timer);
          resolve(p);
        }
      }
    });
    exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready\n${stderr}`));
    });
  });
  // Keep draining stdout so a chatty child never blocks on a full pipe; SVC_BENCH_STDOUT_DIR keeps it, one
  // file per child (what V8's --trace-gc-nvp prints, passed with --gateway-node-args, say).
  if (process.env.SVC_BENCH_STDOUT_DIR) child.stdout.pipe(createWriteStream(join(process.env.SVC_BENCH_STDOUT_DIR, `${name}-${child.pid}.out`)));
  else child.stdout.resume();
  return {
    name,
    pid: child.pid,
    port,
    get exited() {
      return exited;
    },
    stderrTail: () => stderr,
    cpuSeconds: () => cpuSeconds(child.pid),
    memory: () => memory(child.pid),
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (exited) return exited;
      child.kill(signal);
      const done = await Promise.race([exit, sleep(graceMs).then(() => null)]);
      if (done) return done;
      child.kill('SIGKILL');
      return exit;
    },
  };
}

/** User + system CPU time of a process, in seconds (Linux /proc; null elsewhere). */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** Resident set now and its high-water mark since the process started, in MB (Linux /proc; ps elsewhere). */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    const r = spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
    const rss = Number(r.stdout?.trim()) / 1024;
    return { rssMb: rss, peakRssMb: NaN };
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the largest sample. */
export function rssSampler(proc, everyMs = 100) {
  let max = 0;
  const take = () => {
    const m = proc.memory().rssMb;
    if (m > max) max = m;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

/** Runs a short command to completion and returns its stdout; throws with its stderr on failure. */
export function runCommand(command, args, env = {}) {
  const r = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

export const readyJson = (line) => {
  try {
    const v = JSON.parse(line);
    return v && v.ready === true && Number.isInteger(v.port) ? v.port : null;
  } catch {
    return null;
  }
};
