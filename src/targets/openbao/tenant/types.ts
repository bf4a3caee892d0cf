/** The OpenBaoTenant kind as the runtime addresses it; its own file so readers need not load the provisioner. */
import { OpenBaoGroup, OpenBaoVersion } from "../../../apis/openbaocluster-names.js";
import { OpenBaoTenantKind, OpenBaoTenantPlural } from "../../../apis/openbaotenant-names.js";
import type { ResourceType } from "../../../runtime/types.js";

export const OPENBAOTENANT: ResourceType = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoTenantKind,
  plural: OpenBaoTenantPlural,
  namespaced: true,
};
