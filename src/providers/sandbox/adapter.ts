/**
 * The sandbox as an in-process ProviderAdapter: no HTTP, but the same answers, pacing and faults as the
 * sandbox server, and the same UpstreamErrors the OpenAI-compatible adapter would raise talking to it.
 */
import { UpstreamError, type EventBatches, type ProviderAdapter, type StreamEvent, type UpstreamCall, type UpstreamCompletion } from '../contract.js';
import { statusError } from '../openai-compatible/upstream-errors.js';
import { abortedError, protocolError } from '../upstream-failures.js';
import { failureTokenIndex, planFaults, type FailureFault, type FaultPlan, type SandboxFaultInput, type SandboxPace } from './faults.js';
import { TokenClock, untilAborted } from './pacing.js';
import { SandboxState, type SandboxStats } from './sandbox-state.js';
import { continuationMessages } from '../continuation.js';
import { simulateCompletion, type SimulatedCompletion, type SimulationInput } from './simulator.js';
import { errorBodyForStatus } from './status-errors.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

export interface SandboxAdapterOptions {
  name?: string;
  pace: SandboxPace;
  /** Faults active from the start; change them later with setFault. */
  faults?: SandboxFaultInput;
}

export interface SandboxAdapter extends ProviderAdapter {
  setFault(fault: SandboxFaultInput | null): void;
  stats(): SandboxStats;
}

export function createSandboxAdapter(options: SandboxAdapterOptions): SandboxAdapter {
  const state = new SandboxState(options.faults);

  function admit(call: UpstreamCall): { plan: FaultPlan; sim: SimulatedCompletion } {
    const plan = planFaults(state.admit(null), options.pace);
    const f = plan.failure;
    if (f?.type === 'status') throw statusError(f.status, JSON.stringify(errorBodyForStatus(f.status, f.message)));
    if (f?.type === 'reset' && f.afterTokens === undefined) throw resetError();
    return { plan, sim: simulateCompletion(simulationInput(call), call.model) };
  }

  return {
    name: options.name ?? 'sandbox',
    protocol: 'sandbox',
    paid: false,

    async complete(call): Promise<UpstreamCompletion> {
      const { plan, sim } = admit(call);
      state.begin();
      try {
        const f = plan.failure;
        // A non-streamed answer has no partial tokens to show: every stall holds the whole response.
        if (f?.type === 'stall_before_first_token' || f?.type === 'stall_after_tokens') await untilAborted(call.signal);
        await new TokenClock(plan.pace, call.signal).beforeToken(Math.max(0, sim.tokenDeltas.length - 1));
        if (f?.type === 'cut_after_tokens' || f?.type === 'malformed_chunk') {
          throw protocolError('upstream sent invalid JSON: (sandbox fault)');
        }
        if (f?.type === 'reset') throw resetError();
        return { message: sim.message, finishReason: sim.finishReason, usage: sim.usage, model: call.model };
      } catch (err) {
        throw call.signal.aborted ? abortedError(call.signal) : err;
      } finally {
        state.end();
      }
    },

    async stream(call): Promise<EventBatches> {
      const { plan, sim } = admit(call);
      const f = plan.failure;
      if (f?.type === 'stall_before_first_token' && f.headers === false) {
        await untilAborted(call.signal).catch(() => {
          throw abortedError(call.signal);
        });
      }
      return simulatedEvents(sim, plan, call.signal, state);
    },

    setFault(fault) {
      state.setFaults(fault);
    },

    stats() {
      return state.stats();
    },
  };
}

async function* simulatedEvents(
  sim: SimulatedCompletion,
  plan: FaultPlan,
  signal: StopSignalLike,
  state: SandboxState,
): AsyncGenerator<StreamEvent[], void, undefined> {
  state.begin();
  try {
    const clock = new TokenClock(plan.pace, signal);
    if (plan.failure?.type === 'stall_before_first_token') await untilAborted(signal);
    await clock.beforeToken(0);
    yield [{ type: 'delta', delta: sim.firstDelta, finishReason: null }];
    const total = sim.tokenDeltas.length;
    const failAt = Math.min(failureTokenIndex(plan.failure) ?? Number.POSITIVE_INFINITY, total);
    for (let i = 0; i < total || i === failAt; i++) {
      if (i === failAt && plan.failure) await strike(plan.failure, signal);
      const delta = sim.tokenDeltas[i];
      if (!delta) break;
      if (i > 0) await clock.beforeToken(i);
      yield [{ type: 'delta', delta, finishReason: null }];
    }
    if (signal.aborted) throw abortedError(signal);
    yield [
      { type: 'delta', delta: {}, finishReason: sim.finishReason },
      { type: 'usage', usage: sim.usage },
    ];
  } catch (err) {
    throw signal.aborted ? abortedError(signal) : err;
  } finally {
    state.end();
  }
}

/** A mid-stream failure, raised exactly as the OpenAI-compatible adapter reports it over HTTP. */
async function strike(failure: FailureFault, signal: StopSignalLike): Promise<void> {
  switch (failure.type) {
    case 'stall_after_tokens':
      await untilAborted(signal);
      return;
    case 'cut_after_tokens':
      throw protocolError('upstream stream ended early (no finish_reason and no [DONE])');
    case 'malformed_chunk':
      throw protocolError('upstream sent a malformed stream chunk: (sandbox fault)');
    case 'reset':
      throw resetError();
    default:
      return;
  }
}

/** What the HTTP sandbox would receive from the OpenAI-compatible adapter, continuation included. */
function simulationInput(call: UpstreamCall): SimulationInput {
  const { request, continuation } = call;
  return continuation ? { ...request, messages: continuationMessages(request.messages, continuation.partial) } : request;
}

function resetError(): UpstreamError {
  return new UpstreamError('connect', 'upstream connection lost: sandbox reset');
}
