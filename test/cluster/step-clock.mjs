/**
 * Preloaded (`node --import`) into one gateway process of the clock-step test: on SIGUSR2 it steps this
 * process's wall clock, `Date.now()` and `new Date()`, by SVC_TEST_CLOCK_STEP_MS, as an NTP step or an
 * operator's `date -s` does, and leaves `performance.now()` (the monotonic clock) alone, as a real step does.
 */
import process from 'node:process';

const step = Number(process.env.SVC_TEST_CLOCK_STEP_MS ?? 0);
const RealDate = globalThis.Date;
let offset = 0;

class SteppedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }

  static now() {
    return RealDate.now() + offset;
  }
}

globalThis.Date = SteppedDate;

process.on('SIGUSR2', () => {
  offset += step;
  process.stderr.write(`${JSON.stringify({ msg: 'test clock stepped', offset_ms: offset, now: new Date().toISOString() })}\n`);
});
