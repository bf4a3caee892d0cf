-- Actions Argo CD offers on an OpenBaoCluster. "backup-now" sets openbao.org/trigger-backup, an
-- edge-triggered request the backup controller acts on once per new value; Git holds no such
-- annotation, so it does not fight the sync. Disabled where the controller would not run a backup.
local actions = {}
local why = nil
if obj.spec == nil or obj.spec.backup == nil then
  why = "spec.backup is not set"
elseif obj.spec.paused == true then
  why = "spec.paused"
elseif obj.status ~= nil and obj.status.breakGlass ~= nil and obj.status.breakGlass.active == true then
  why = "break glass is active"
elseif obj.status ~= nil and obj.status.initialized ~= true then
  why = "the cluster is not initialized"
end
actions["backup-now"] = { ["disabled"] = why ~= nil, ["iconClass"] = "fa fa-fw fa-database", ["displayName"] = "Back up now" }
return actions
