-- Requests one backup now: the backup controller starts a manual backup when
-- openbao.org/trigger-backup carries a value it has not handled yet. The value is the current UTC
-- time, so every use of the action is a new request.
local os = require("os")
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["openbao.org/trigger-backup"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
