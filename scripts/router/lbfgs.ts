/**
 * Limited-memory BFGS with a backtracking (Armijo) line search: enough for a smooth convex objective
 * of ~50k parameters, and deterministic (no randomness, fixed order of every sum).
 */

/** Returns the objective at x and writes its gradient into grad. */
export type Objective = (x: Float64Array, grad: Float64Array) => number;

const MEMORY = 8;
const ARMIJO = 1e-4;
const TOLERANCE = 1e-9;

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

export function minimise(objective: Objective, start: Float64Array, maxIterations: number): Float64Array {
  const n = start.length;
  let x = start.slice();
  let grad = new Float64Array(n);
  let f = objective(x, grad);
  const s: Float64Array[] = [];
  const y: Float64Array[] = [];
  const rho: number[] = [];
  const alpha = new Float64Array(MEMORY);
  const direction = new Float64Array(n);
  let nextX = new Float64Array(n);
  let nextGrad = new Float64Array(n);

  for (let iter = 0; iter < maxIterations; iter++) {
    // Two-loop recursion: direction = -H * grad.
    direction.set(grad);
    for (let i = s.length - 1; i >= 0; i--) {
      const a = (rho[i] as number) * dot(s[i] as Float64Array, direction);
      alpha[i] = a;
      const yi = y[i] as Float64Array;
      for (let j = 0; j < n; j++) direction[j] = (direction[j] as number) - a * (yi[j] as number);
    }
    const last = s.length - 1;
    const gamma = last >= 0 ? dot(s[last] as Float64Array, y[last] as Float64Array) / dot(y[last] as Float64Array, y[last] as Float64Array) : 1 / Math.sqrt(dot(grad, grad));
    for (let j = 0; j < n; j++) direction[j] = (direction[j] as number) * gamma;
    for (let i = 0; i < s.length; i++) {
      const b = (rho[i] as number) * dot(y[i] as Float64Array, direction);
      const si = s[i] as Float64Array;
      const a = alpha[i] as number;
      for (let j = 0; j < n; j++) direction[j] = (direction[j] as number) + (a - b) * (si[j] as number);
    }
    for (let j = 0; j < n; j++) direction[j] = -(direction[j] as number);

    let slope = dot(grad, direction);
    if (slope >= 0) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      s.length = y.length = rho.length = 0;
      for (let j = 0; j < n; j++) direction[j] = -(grad[j] as number);
      slope = dot(grad, direction);
    }
    let step = 1;
    let nextF = Infinity;
    for (let tries = 0; tries < 30; tries++) {
      for (let j = 0; j < n; j++) nextX[j] = (x[j] as number) + step * (direction[j] as number);
      nextF = objective(nextX, nextGrad);
      if (nextF <= f + ARMIJO * step * slope) break;
      step /= 2;
    }
    if (!(nextF < f)) break;

    const sk = new Float64Array(n);
    const yk = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      sk[j] = (nextX[j] as number) - (x[j] as number);
      yk[j] = (nextGrad[j] as number) - (grad[j] as number);
    }
    const sy = dot(sk, yk);
    if (sy > 1e-12) {
      if (s.length === MEMORY) {
        s.shift();
        y.shift();
        rho.shift();
      }
      s.push(sk);
      y.push(yk);
      rho.push(1 / sy);
    }
    const improvement = f - nextF;
    [x, nextX] = [nextX, x];
    [grad, nextGrad] = [nextGrad, grad];
    f = nextF;
    if (improvement < TOLERANCE * Math.max(1, Math.abs(f))) break;
  }
  return x;
}
