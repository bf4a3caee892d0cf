-- Argo CD health of an OpenBaoCluster (openbao.org/v1alpha1), from status.phase and the conditions the
-- workload plane (Available, Degraded) and the AdminOps plane (Upgrading, BackingUp) write, and from
-- status.breakGlass. Argo CD closes the string library for argocd-cm scripts: only `..` and base.
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

-- Upgrading=False with one of these reasons: the upgrade the spec asks for failed or was refused.
local upgradeRefused = {
  UpgradeFailed = true, DowngradeBlocked = true, InvalidVersion = true, InvalidSpec = true,
  PreUpgradeBackupFailed = true, StepDownFailed = true, StepDownTimeout = true, RollbackFailed = true,
}

if obj.metadata.deletionTimestamp ~= nil then
  return say("Progressing", "being deleted: the controller applies spec.deletionPolicy and removes its finalizer")
end

local generation = obj.metadata.generation or 0
if obj.status == nil or obj.status.observedGeneration == nil then
  return say("Progressing", "waiting for the controller to reconcile generation " .. generation)
end
if obj.status.observedGeneration < generation then
  return say("Progressing", "the status is for generation " .. obj.status.observedGeneration ..
    "; waiting for the controller to reconcile generation " .. generation)
end

-- Break glass halts risky automation until a person acknowledges it: the cluster needs a human.
local glass = obj.status.breakGlass
if glass ~= nil and glass.active == true then
  return say("Degraded", "break glass: " .. (glass.message or "") ..
    "; once one revision holds a quorum, copy status.breakGlass.nonce into spec.breakGlassAck")
end

local available = condition("Available")
if obj.spec ~= nil and obj.spec.paused == true then
  local detail = ""
  if available ~= nil then detail = " (" .. explain(available) .. ")" end
  return say("Suspended", "spec.paused: only deletion is reconciled" .. detail)
end

local drifted = condition("Drifted")
if drifted ~= nil and drifted.status == "True" then
  return say("Suspended", "observe-only: " .. (drifted.message or ""))
end

local degraded = condition("Degraded")
if degraded ~= nil and degraded.status == "True" then
  return say("Degraded", explain(degraded))
end
if obj.status.phase == "Failed" then
  return say("Degraded", "phase Failed" .. ((degraded and ": " .. explain(degraded)) or ""))
end

local upgrading = condition("Upgrading")
if upgrading ~= nil then
  if upgrading.status == "True" then
    return say("Progressing", "upgrading: " .. explain(upgrading))
  end
  if upgradeRefused[upgrading.reason] then
    return say("Degraded", "upgrade: " .. explain(upgrading))
  end
  if upgrading.reason == "UpgradePaused" then
    return say("Suspended", "upgrade: " .. explain(upgrading))
  end
end

if available == nil then
  return say("Progressing", "phase " .. (obj.status.phase or "unknown") .. ": waiting for the Available condition")
end
if available.status ~= "True" then
  -- External TLS: the certificate Secret someone else provides does not exist yet.
  if available.reason == "TLSSecretMissing" then
    return say("Missing", explain(available))
  end
  return say("Progressing", "phase " .. (obj.status.phase or "unknown") .. ": " .. explain(available))
end
-- A backup runs beside a serving cluster: still Healthy, and the message says so.
if obj.status.phase == "BackingUp" then
  return say("Healthy", "backing up; " .. explain(available))
end
return say("Healthy", explain(available))
