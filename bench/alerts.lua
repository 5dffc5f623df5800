-- wrk script for row 5 (alert intake): generic alert payloads of about 1 KB,
-- 10% of them repeats of a small set of fingerprints (they group), the rest unique.
-- Arguments (after `--`): the integration key, then a run tag that keeps the
-- unique fingerprints of one run apart from those of the others.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

local counter = 0
local run_tag = "run"
local filler = string.rep("Checkout latency above the objective on the primary cluster. ", 9)

function init(args)
  local key = args[1] or ""
  run_tag = args[2] or run_tag
  math.randomseed(os.time() + (tid or 0) * 7919)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. key
end

function request()
  counter = counter + 1
  local fingerprint
  if math.random(10) == 1 then
    fingerprint = "repeat-" .. math.random(20)
  else
    fingerprint = string.format("%s-%d-%d", run_tag, tid or 0, counter)
  end
  local body = string.format(
    '{"title":"High error rate on checkout (%s)","description":"%s",' ..
    '"severity":"high","service":"checkout","monitoring_tool":"bench",' ..
    '"hosts":["web-%d","web-%d"],"svc_environment_name":"production",' ..
    '"start_time":"2026-11-22T10:00:00Z","fingerprint":"%s",' ..
    '"runbook":"https://runbooks.invalid/checkout/error-rate","team":"payments","region":"eu-west"}',
    fingerprint, filler, counter % 16, (counter + 1) % 16, fingerprint)
  return wrk.format(nil, nil, nil, body)
end
