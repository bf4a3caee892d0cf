-- Argo CD health of an OpenBaoRestore (openbao.org/v1alpha1): a one-shot request whose status.phase
-- goes Pending -> Validating -> Running -> Completed or Failed, or Unknown when the Job it committed
-- to vanished before its end was seen (never retried). Argo CD closes the string library for
-- argocd-cm scripts: only `..` and base.
local hs = {}

local function condition(kind)
  if obj.status == nil or obj.status.conditions == nil then return nil end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then return c end
  end
  return nil
end

local function say(status, message)
  hs.status = status
  hs.message = message
  return hs
end

if obj.metadata.deletionTimestamp ~= nil then
  return say("Progressing", "being deleted: the controller releases the cluster's operation lock and removes its finalizer")
end

local generation = obj.metadata.generation or 0
if obj.status == nil or obj.status.phase == nil then
  return say("Progressing", "Pending: waiting for the controller to pick up the request")
end
local phase = obj.status.phase
local message = obj.status.message or ""
-- A terminal phase is final whatever the generation: the controller never runs a restore twice.
if phase == "Completed" then return say("Healthy", "Completed: " .. message) end
if phase == "Failed" then return say("Degraded", "Failed: " .. message) end
if phase == "Unknown" then return say("Degraded", "Unknown: " .. message) end

if obj.status.observedGeneration ~= nil and obj.status.observedGeneration < generation then
  return say("Progressing", "the status is for generation " .. obj.status.observedGeneration ..
    "; waiting for the controller to reconcile generation " .. generation)
end

local drifted = condition("Drifted")
if drifted ~= nil and drifted.status == "True" then
  return say("Suspended", "observe-only: " .. (drifted.message or ""))
end

if phase == "Validating" then
  local validated = condition("Validated")
  -- A Secret the restore needs does not exist yet; it goes on once it is created.
  if validated ~= nil and validated.status == "False" and validated.reason == "CredentialsMissing" then
    return say("Missing", "Validating: " .. message)
  end
end
return say("Progressing", phase .. ": " .. message)
