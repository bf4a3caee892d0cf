-- Argo CD health of a VaultSeed (ohmlab.fr/v1alpha1). Its conditions follow kstatus: Ready is always
-- there, Reconciling and Stalled only while True, Drifted only in observe-only mode. Argo CD closes
-- the string library for argocd-cm scripts, so this uses only `..` and the base library.
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
  return say("Progressing", "being deleted: the controller applies deletionPolicy and removes its finalizer")
end

local generation = obj.metadata.generation or 0
if obj.status == nil or obj.status.observedGeneration == nil then
  return say("Progressing", "waiting for the controller to reconcile generation " .. generation)
end
if obj.status.observedGeneration < generation then
  return say("Progressing", "the status is for generation " .. obj.status.observedGeneration ..
    "; waiting for the controller to reconcile generation " .. generation)
end

local ready = condition("Ready")
if ready == nil then
  return say("Progressing", "waiting for the controller to set the Ready condition")
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  return say("Degraded", explain(stalled))
end
if ready.status == "True" then
  return say("Healthy", explain(ready))
end
-- Observe-only mode: the controller reconciled the object and reports what a real run would write;
-- it is done with it, so the sync goes on (a Suspended object would hold its sync wave forever).
if ready.reason == "ObserveOnly" then
  return say("Healthy", explain(ready))
end
-- A referenced Secret key or KV path does not exist yet; the controller retries until it does.
if ready.reason == "RefPending" then
  return say("Missing", explain(ready))
end
return say("Progressing", explain(ready))
