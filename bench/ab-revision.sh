#!/usr/bin/env bash
# The gateway's CPU per request at another revision, measured by one fixed bench harness, for A/B and
# bisection of a regression (docs/performance.md). Builds REV in a scratch checkout that borrows this tree's
# node_modules (so revisions that predate a dependency still build), copies HARNESS_REV's bench/ into it (the
# harness stays the same across revisions), and runs one overhead point:
#
#   bench/ab-revision.sh REV [HARNESS_REV]        e.g. bench/ab-revision.sh 5906d7d; bench/ab-revision.sh HEAD
#   SVC_AB_MODES=nonstream,stream bench/ab-revision.sh REV     (default: nonstream)
#
# Run the revisions back to back on a quiet machine: between days, and while anything else runs, this
# machine's figures move by more than the differences looked for.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REV="$1"
HARNESS_REV="${2:-HEAD}"
WORK="$(mktemp -d /tmp/svc-ab-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
git -C "$ROOT" worktree add -q --detach "$WORK/tree" "$REV"
trap 'git -C "$ROOT" worktree remove --force "$WORK/tree"; rm -rf "$WORK"' EXIT
ln -s "$ROOT/node_modules" "$WORK/tree/node_modules"
rm -rf "$WORK/tree/bench"
git -C "$ROOT" archive "$HARNESS_REV" bench | tar -x -C "$WORK/tree"
(cd "$WORK/tree" && ./node_modules/.bin/tsc -p tsconfig.build.json)
# The scratch tree has no ../shared beside it: the limit gateway is the one beside this checkout.
export SVC_BENCH_LIMIT_GATEWAY="${SVC_BENCH_LIMIT_GATEWAY:-$ROOT/../shared/bench/limit-gateway.mjs}"
(cd "$WORK/tree" && node bench/overhead.mjs --seconds 6 --warmup 2 --stores sqlite --connections 32 --modes "${SVC_AB_MODES:-nonstream}" \
  --out "$WORK/result.json" | grep -E "^ +gateway-sqlite +(nonstream|stream)@32" | sed "s/^/$REV /")
