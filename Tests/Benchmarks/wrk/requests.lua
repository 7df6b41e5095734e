-- wrk script for `scripts/bench http`: sends the requests of a file in turn (the benchmark's
-- plan, written by scripts/bench-http.py), each with its own bearer token and ids, and prints
-- the figures as one JSON line at the end.
--   wrk -s requests.lua ... -- FILE
-- FILE: "H<TAB>name<TAB>value" lines (headers on every request), then one request a line:
-- "method<TAB>path<TAB>token<TAB>body" (token and body may be empty; a body is JSON).

local requests = {}
local counter = 0
local threads = 0

function setup(thread)
   thread:set("thread_index", threads)
   threads = threads + 1
end

function init(args)
   local common = {}
   for line in io.lines(args[1]) do
      local fields = {}
      for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
      if fields[1] == "H" then
         common[fields[2]] = fields[3]
      else
         local headers = {}
         for name, value in pairs(common) do headers[name] = value end
         if fields[3] ~= "" then headers["Authorization"] = "Bearer " .. fields[3] end
         local body = nil
         if fields[4] ~= nil and fields[4] ~= "" then
            body = fields[4]
            headers["Content-Type"] = "application/json"
         end
         requests[#requests + 1] = wrk.format(fields[1], fields[2], headers, body)
      end
   end
   -- Threads start at different places in the list.
   counter = (thread_index or 0) * 7919
end

function request()
   counter = counter + 1
   return requests[(counter % #requests) + 1]
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "figures.lua")
