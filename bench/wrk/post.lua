-- wrk script of the bench: POSTs one fixed chat-completions body (BENCH_BODY) with an Authorization header
-- (BENCH_AUTH: none, one, or several separated by commas, used in turn, one per bench account) and any
-- extra headers (BENCH_HEADERS: one "Name: value" a line), and prints the summary as one JSON line
-- prefixed BENCH_JSON for bench/lib/load.mjs. errors.status counts answers with status >= 400 (wrk's own
-- rule).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"

-- Extra headers go on wrk's static request, so every request below carries them.
for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

local auths = {}
for auth in string.gmatch(os.getenv("BENCH_AUTH") or "", "[^,]+") do
  table.insert(auths, auth)
end

if #auths == 1 then
  -- One key: wrk's static request, formatted once.
  wrk.headers["Authorization"] = auths[1]
elseif #auths > 1 then
  -- Several keys: the requests are formatted once, at start, and taken in turn.
  local requests = {}
  local turn = 0
  init = function(args)
    for _, auth in ipairs(auths) do
      -- wrk.format replaces the static headers with these: copy them (extra headers included) first.
      local headers = {}
      for name, value in pairs(wrk.headers) do headers[name] = value end
      headers["Authorization"] = auth
      table.insert(requests, wrk.format(nil, nil, headers, nil))
    end
  end
  request = function()
    turn = turn % #requests + 1
    return requests[turn]
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
