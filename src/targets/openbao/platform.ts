/**
 * The platform the OpenBao pods run on, as far as their pod security context is concerned.
 *
 * On Kubernetes the operator pins the uid, gid and fsGroup of the pods it makes (the image's users
 * own the files). On OpenShift a SecurityContextConstraint assigns them from the namespace's range
 * and rejects a pod that names others, so they are left out there; what a cluster's
 * spec.securityContext sets still applies. `auto` (the configuration's default) is decided once at
 * the target's start (platform-detect.ts); the builders only ever see the result, as data.
 */

export const PLATFORM_SETTINGS = ["auto", "kubernetes", "openshift"] as const;
/** The configuration's `platform` value. */
export type PlatformSetting = (typeof PLATFORM_SETTINGS)[number];
/** A decided platform: what the pod and Job builders are given. */
export type Platform = Exclude<PlatformSetting, "auto">;

/** The API group whose presence marks OpenShift (SecurityContextConstraints live there). */
export const OPENSHIFT_SECURITY_GROUP = "security.openshift.io";

/**
 * The platform the builders use for a configuration. Setup replaces `auto` with what discovery
 * found, so `auto` here only comes from a configuration built without the target's start (tests,
 * tools): it means Kubernetes, the pod templates of before the setting existed.
 */
export function platformOf(config: { platform?: PlatformSetting }): Platform {
  return config.platform === "openshift" ? "openshift" : "kubernetes";
}

/** Whether the pods' uid, gid and fsGroup are the operator's to pin (not the platform's to assign). */
export const pinsPodIds = (platform: Platform | undefined): boolean => platform !== "openshift";
