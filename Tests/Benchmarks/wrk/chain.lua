-- wrk script for the chained scenarios of `scripts/bench http` (auth's refresh): run with one
-- connection a thread (-t N -c N), each thread keeps one chain: every answer carries the next
-- value in a JSON string field, and the next request sends it.
--   wrk -t N -c N -s chain.lua ... -- FILE
-- FILE: "H<TAB>name<TAB>value" headers on every request; "F<TAB>field" the answer's field;
-- "R<TAB>method<TAB>path<TAB>body" the request, "{{chain}}" in its body standing for the value;
-- "S<TAB>value" the chains' first values, one a thread.

local threads = 0

function setup(thread)
   thread:set("thread_index", threads)
   threads = threads + 1
end

local headers, seeds = {}, {}
local method, path, template, pattern, current

function init(args)
   for line in io.lines(args[1]) do
      local fields = {}
      for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
      if fields[1] == "H" then
         headers[fields[2]] = fields[3]
      elseif fields[1] == "F" then
         pattern = '"' .. fields[2] .. '":"([^"]+)"'
      elseif fields[1] == "R" then
         method, path, template = fields[2], fields[3], fields[4]
      elseif fields[1] == "S" then
         seeds[#seeds + 1] = fields[2]
      end
   end
   headers["Content-Type"] = "application/json"
   current = seeds[(thread_index or 0) + 1]
end

function request()
   local body = template:gsub("{{chain}}", function() return current end)
   return wrk.format(method, path, headers, body)
end

-- A failed answer leaves the value as it was: the next request presents a spent token, which
-- the service refuses too, and wrk counts each as a status error.
function response(status, headers, body)
   if status == 200 then
      local next = body:match(pattern)
      if next then current = next end
   end
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "figures.lua")
