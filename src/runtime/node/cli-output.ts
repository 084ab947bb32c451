/** CLI output: a human sentence by default, the object as JSON with --json (for scripts). */
export class CliError extends Error {
  constructor(
    message: string,
    /** 2 for usage errors, 1 otherwise. */
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export function emit(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? JSON.stringify(value, null, 2) + '\n' : human + '\n');
}
