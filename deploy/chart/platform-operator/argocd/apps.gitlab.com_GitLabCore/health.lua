-- Argo CD health of a GitLabCore (apps.gitlab.com/v2alpha1), from status.phase (Preparing, Upgrading,
-- Running, Failed) and the Available, Progressing and Drifted conditions. Argo CD closes the string
-- library for argocd-cm scripts: only `..` and base.
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

local function explain(c)
  return (c.reason or "") .. ": " .. (c.message or "")
end

if obj.metadata.deletionTimestamp ~= nil then
  return say("Progressing", "being deleted: the controller removes the release's objects, then its finalizer")
end

local generation = obj.metadata.generation or 0
if obj.status == nil or obj.status.observedGeneration == nil then
  return say("Progressing", "waiting for the controller to reconcile generation " .. generation)
end
if obj.status.observedGeneration < generation then
  return say("Progressing", "the status is for generation " .. obj.status.observedGeneration ..
    "; waiting for the controller to reconcile generation " .. generation)
end

-- Observe-only mode applies nothing: Drifted says what a real pass would do.
local drifted = condition("Drifted")
if drifted ~= nil then
  if drifted.status == "True" then return say("Suspended", "observe-only: " .. (drifted.message or "")) end
  return say("Healthy", "observe-only: " .. (drifted.message or ""))
end

local phase = obj.status.phase or "Preparing"
local available = condition("Available")
local progressing = condition("Progressing")
if phase == "Failed" then
  -- Progressing=False carries the stage that failed; Available may still describe the running release.
  if progressing ~= nil and progressing.status == "False" then return say("Degraded", "Failed: " .. explain(progressing)) end
  if available ~= nil then return say("Degraded", "Failed: " .. explain(available)) end
  return say("Degraded", "Failed")
end
if phase == "Running" and available ~= nil and available.status == "True" then
  return say("Healthy", explain(available))
end
if progressing ~= nil and progressing.status == "True" then
  return say("Progressing", phase .. ": " .. explain(progressing))
end
if available ~= nil then return say("Progressing", phase .. ": " .. explain(available)) end
return say("Progressing", phase .. ": waiting for the first pass")
