/**
 * The kinds of journal entry (`ledger_entries`), one row per movement of credits in or out of a grant's
 * `remaining`: grant (+amount), reserve (-), release and void (+, back from a hold), settle (spent, no change
 * to remaining: the credits already left `remaining` at reserve), expire (-, what is left of an expired
 * grant, written off by the reaper). So for every grant:
 *   remaining = grant - reserve + release + void - expire
 *   spent     = settle
 * and for every final hold the reserve entries equal settle + release + void. `ledger verify` checks this
 * (ledger-audit.ts). Grant and expire entries belong to no hold.
 */
export type EntryKind = 'grant' | 'reserve' | 'settle' | 'release' | 'void' | 'expire';
