/**
 * The Redis side of the limiter: one Lua script, run atomically by Redis, decides and records a request
 * with the same sliding-window rule as the in-process limiter (sliding-window.ts). Time is Redis's own
 * (TIME), so every gateway instance judges the window on one clock. Per key:
 *
 *   KEYS[1] a sorted set: one member per admitted request, score = admission time (ms), member =
 *           "<tokens>:<unique id>" (the tokens ride in the member, so expiring an entry knows what it frees)
 *   KEYS[2] the running token sum of the members
 *
 * Both carry the key id in a hash tag, so they live in one slot of a Redis Cluster. Both expire one window
 * after the last admission, so idle keys leave nothing behind. A decision costs O(log n) plus the entries
 * that left the window since the last one; a refusal on tokens walks the window to say when it will fit.
 *
 * ARGV: rpm (0 = none), tpm (0 = none), tokens, window ms, unique id.
 * Returns: allowed (0/1), requests in window, tokens in window, retry-after ms, reset ms, too large (0/1).
 */
export const SLIDING_WINDOW_SCRIPT = `
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local floor = now - window
local sum = tonumber(redis.call('GET', KEYS[2]) or '0')
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', floor)
if #gone > 0 then
  for _, m in ipairs(gone) do sum = sum - tonumber(string.match(m, '^(%d+):')) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', floor)
end
local count = redis.call('ZCARD', KEYS[1])
if count == 0 then sum = 0 end
local tooLarge = tpm > 0 and cost > tpm
local requestsOk = rpm == 0 or count < rpm
local tokensOk = tpm == 0 or sum + cost <= tpm
local allowed = (not tooLarge) and requestsOk and tokensOk
local retryAt = now
if allowed then
  redis.call('ZADD', KEYS[1], now, ARGV[3] .. ':' .. ARGV[5])
  count = count + 1
  sum = sum + cost
  redis.call('SET', KEYS[2], sum, 'PX', window)
  redis.call('PEXPIRE', KEYS[1], window)
elseif not tooLarge then
  if not requestsOk then
    local e = redis.call('ZRANGE', KEYS[1], count - rpm, count - rpm, 'WITHSCORES')
    retryAt = math.max(retryAt, tonumber(e[2]) + window)
  end
  if not tokensOk then
    local needed = sum + cost - tpm
    local freed = 0
    local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      freed = freed + tonumber(string.match(entries[i], '^(%d+):'))
      if freed >= needed then
        retryAt = math.max(retryAt, tonumber(entries[i + 1]) + window)
        break
      end
    end
  end
end
local reset = 0
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #newest > 0 then reset = math.max(0, tonumber(newest[2]) + window - now) end
return { allowed and 1 or 0, count, sum, retryAt - now, reset, tooLarge and 1 or 0 }
`;
