/**
 * Continuing an answer another target started, by Anthropic's assistant prefill: the partial answer becomes
 * the final assistant turn and the model writes on from its last character.
 *
 * The API refuses a final assistant turn that ends with whitespace, so the trailing whitespace is held back
 * from the prefill. The client already has it, though, and the model, continuing from the trimmed text, will
 * usually write that whitespace again (`"my name is"` + `" Claude"`). So the first text the upstream returns
 * loses the longest prefix it shares with the held-back whitespace, across as many deltas as that takes:
 * `"is "` + `" Claude"` delivers `"Claude"`, not a double space. Once the upstream writes anything else the
 * rest passes untouched; a model that skips the whitespace (`"Claude"`) is left alone, since what the client
 * holds already separates the words.
 */

export interface Prefill {
  /** What is sent as the final assistant turn; empty when the partial was only whitespace (nothing to send). */
  text: string;
  /** The trailing whitespace held back, which the client already has. */
  heldBack: string;
}

export function planPrefill(partial: string): Prefill {
  const text = partial.trimEnd();
  return { text, heldBack: partial.slice(text.length) };
}

/** Drops the upstream's repetition of the held-back whitespace from the start of its text. */
export class PrefillEcho {
  private pending: string;

  constructor(heldBack: string) {
    this.pending = heldBack;
  }

  /** The part of the upstream's next text piece the client does not already have. */
  take(text: string): string {
    if (this.pending.length === 0) return text;
    let i = 0;
    while (i < text.length && i < this.pending.length && text[i] === this.pending[i]) i++;
    // A piece that ended inside the echo leaves the rest of it to match the next piece; anything else ends it.
    this.pending = i === text.length ? this.pending.slice(i) : '';
    return text.slice(i);
  }
}
