import { OpenBaoApiVersion, OpenBaoGroup, OpenBaoVersion } from "../../../apis/openbaocluster-names.js";
import {
  OpenBaoRestoreKind,
  OpenBaoRestoreManagers,
  OpenBaoRestorePlural,
} from "../../../apis/openbaorestore-names.js";
import type { ResourceType } from "../../../runtime/types.js";

export const OPENBAORESTORE: ResourceType = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoRestoreKind,
  plural: OpenBaoRestorePlural,
  namespaced: true,
};
export const RESTORE_API_VERSION = OpenBaoApiVersion;

/** The restore controller's field manager for OpenBaoRestore.status and the Jobs it creates. */
export const RESTORE_FIELD_MANAGER = OpenBaoRestoreManagers.fieldManager;
/** Upstream's finalizer: the lock is released before a deleted request goes away. */
export const RESTORE_FINALIZER = "openbao.org/openbaorestore-finalizer";
