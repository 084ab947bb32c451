/**
 * The sandbox's mutable state: the server-wide fault (tests flip a primary down and back up at runtime) and
 * the counters tests read to know how many upstream calls the gateway made.
 */
import { toList, type SandboxFault, type SandboxFaultInput } from './faults.js';

export interface SandboxStats {
  /** Chat-completion requests received since start (or the last reset), valid or not. */
  requests: number;
  /** Requests still being answered: a stream that is still open counts until it ends or the client leaves. */
  inFlight: number;
}

export class SandboxState {
  private faults: SandboxFault[];
  /** Requests seen since the current fault was set, for its `after`/`times` window. */
  private sinceSet = 0;
  private requests = 0;
  private inFlight = 0;

  constructor(initial?: SandboxFaultInput | null) {
    this.faults = toList(initial);
  }

  setFaults(input: SandboxFaultInput | null): void {
    this.faults = toList(input);
    this.sinceSet = 0;
  }

  currentFaults(): SandboxFault[] {
    return [...this.faults];
  }

  /** Counts a chat request and returns the faults it gets: its own if it brought some, else the active ones. */
  admit(requestFaults: SandboxFault[] | null): SandboxFault[] {
    this.requests++;
    const nth = ++this.sinceSet;
    if (requestFaults) return requestFaults;
    return this.faults.filter((f) => {
      const after = f.after ?? 0;
      return nth > after && (f.times === undefined || nth <= after + f.times);
    });
  }

  begin(): void {
    this.inFlight++;
  }

  end(): void {
    this.inFlight--;
  }

  stats(): SandboxStats {
    return { requests: this.requests, inFlight: this.inFlight };
  }

  resetStats(): void {
    this.requests = 0;
  }
}
