-- The figures every wrk script of `scripts/bench http` prints at the end, as one JSON line
-- (loaded by requests.lua and chain.lua).

function done(summary, latency, requests)
   local errors = summary.errors
   io.write(string.format(
      '{"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,"timeouts":%d,"mean_us":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
      summary.requests, summary.duration, errors.status, errors.connect + errors.read + errors.write, errors.timeout,
      latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
