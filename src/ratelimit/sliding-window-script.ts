/**
 * The Redis side of the limiter: one Lua script, run atomically by Redis, decides and records a request
 * with the same sliding-window rule as the in-process limiter (sliding-window.ts). Time is Redis's own
 * (TIME), so every gateway instance judges the window on one clock. A request counts in the window of its
 * key and of each limited ancestor of the key (a key family, docs/api.md); it is admitted only if every
 * window admits it, and then recorded in all of them, in the one atomic step. Per window i (1-based):
 *
 *   KEYS[2i-1] a sorted set: one member per admitted request, score = admission time (ms), member =
 *              "<tokens>:<unique id>" (the tokens ride in the member, so expiring an entry knows what it frees)
 *   KEYS[2i]   the running token sum of the members
 *
 * Every key of a family carries the family's root key id in a hash tag, so they live in one slot of a Redis
 * Cluster. All expire one window after the last admission, so idle keys leave nothing behind. A decision
 * costs O(log n) per window plus the entries that left the window since the last one; a refusal on tokens
 * walks the window to say when it will fit.
 *
 * ARGV: tokens, window ms, unique id, then per window: rpm (0 = none), tpm (0 = none).
 * Returns per window, flattened: ok (0/1), too large (0/1), retry-after ms, requests in window, tokens in
 * window, reset ms; the counts are after the decision.
 */
export const SLIDING_WINDOW_SCRIPT = `
local cost = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local floor = now - window
local n = #KEYS / 2
local state = {}
local allowed = true
for i = 1, n do
  local log, total = KEYS[2 * i - 1], KEYS[2 * i]
  local rpm = tonumber(ARGV[2 + 2 * i])
  local tpm = tonumber(ARGV[3 + 2 * i])
  local sum = tonumber(redis.call('GET', total) or '0')
  local gone = redis.call('ZRANGEBYSCORE', log, '-inf', floor)
  if #gone > 0 then
    for _, m in ipairs(gone) do sum = sum - tonumber(string.match(m, '^(%d+):')) end
    redis.call('ZREMRANGEBYSCORE', log, '-inf', floor)
  end
  local count = redis.call('ZCARD', log)
  if count == 0 then sum = 0 end
  local tooLarge = tpm > 0 and cost > tpm
  local requestsOk = rpm == 0 or count < rpm
  local tokensOk = tpm == 0 or sum + cost <= tpm
  local ok = (not tooLarge) and requestsOk and tokensOk
  local retryAt = now
  if not ok and not tooLarge then
    if not requestsOk then
      local e = redis.call('ZRANGE', log, count - rpm, count - rpm, 'WITHSCORES')
      retryAt = math.max(retryAt, tonumber(e[2]) + window)
    end
    if not tokensOk then
      local needed = sum + cost - tpm
      local freed = 0
      local entries = redis.call('ZRANGE', log, 0, -1, 'WITHSCORES')
      for j = 1, #entries, 2 do
        freed = freed + tonumber(string.match(entries[j], '^(%d+):'))
        if freed >= needed then
          retryAt = math.max(retryAt, tonumber(entries[j + 1]) + window)
          break
        end
      end
    end
  end
  allowed = allowed and ok
  state[i] = { ok, tooLarge, retryAt - now, count, sum }
end
local out = {}
for i = 1, n do
  local log, total = KEYS[2 * i - 1], KEYS[2 * i]
  local s = state[i]
  local count, sum = s[4], s[5]
  if allowed then
    redis.call('ZADD', log, now, ARGV[1] .. ':' .. ARGV[3])
    count = count + 1
    sum = sum + cost
    redis.call('SET', total, sum, 'PX', window)
    redis.call('PEXPIRE', log, window)
  end
  local reset = 0
  local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
  if #newest > 0 then reset = math.max(0, tonumber(newest[2]) + window - now) end
  table.insert(out, s[1] and 1 or 0)
  table.insert(out, s[2] and 1 or 0)
  table.insert(out, s[3])
  table.insert(out, count)
  table.insert(out, sum)
  table.insert(out, reset)
end
return out
`;
