import { errorMessage } from "../../runtime/errors.js";
import type { RestMapper } from "../../runtime/restmapper.js";
import { OPENSHIFT_SECURITY_GROUP, type Platform, type PlatformSetting } from "./platform.js";

/**
 * Decides `platform: auto` once, at the target's start: OpenShift when the API server serves the
 * security.openshift.io group, Kubernetes otherwise. An explicit setting is taken as it is. A
 * discovery that fails stops the start with the field named rather than guessing: a wrong guess
 * either has every pod refused by the SCCs or leaves the volumes' group unset.
 */
export async function resolvePlatform(
  discovery: Pick<RestMapper, "servedGroups">,
  setting: PlatformSetting | undefined,
  field = "targets.openbao.platform",
): Promise<{ platform: Platform; detected: boolean }> {
  if (setting === "kubernetes" || setting === "openshift") return { platform: setting, detected: false };
  let groups: string[];
  try {
    groups = await discovery.servedGroups();
  } catch (e) {
    throw new Error(
      `${field}: auto could not list the API groups served (${errorMessage(e)}); set kubernetes or openshift`,
    );
  }
  return {
    platform: groups.includes(OPENSHIFT_SECURITY_GROUP) ? "openshift" : "kubernetes",
    detected: true,
  };
}
