-- wrk script of tools/bench-serve.sh: each request POSTs the next line of $BENCH_BODIES (one
-- JSON body of /translate per line: one sentence) to /translate; each wrk thread starts at its
-- own line so that concurrent connections send different sentences.
local bodies = {}
for line in io.lines(os.getenv("BENCH_BODIES")) do
  bodies[#bodies + 1] = line
end
local next_body = math.random(#bodies)
local headers = { ["Content-Type"] = "application/json" }

request = function()
  next_body = next_body % #bodies + 1
  return wrk.format("POST", "/translate", headers, bodies[next_body])
end

response = function(status, _, body)
  if status ~= 200 then
    io.stderr:write("status " .. status .. ": " .. body .. "\n")
  end
end
