import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import { proceed } from "../../../runtime/stages.js";
import { checkImage } from "../imageverify/check.js";
import { enabledVerification } from "../imageverify/settings.js";
import { bluePinnedImage, greenRevision, withImage } from "../workload/statefulsets/bluegreen.js";
import { imageOf } from "../workload/statefulsets/build.js";
import { failedWith, type PassBase, type StepResult, type Verified } from "./context.js";

/**
 * spec.imageVerification, before any pod can use an image: every OpenBao image the workload is about
 * to run (the spec's, blue's while a blue-green upgrade holds it, green's) is verified, and the
 * StatefulSets then run it pinned to the verified digest. Under Block a failure stops the pass here,
 * so no StatefulSet is created or changed; under Warn the image is used as written, with a Warning
 * event.
 */
export async function imagesStep({ cluster, ctx, deps }: PassBase): Promise<StepResult<Verified>> {
  if (!enabledVerification(cluster.spec, "imageVerification") || !deps.imageVerifier)
    return proceed({ pinnedImages: undefined });
  const green = greenRevision(cluster);
  const wanted: { image: string; reason: OpenBaoClusterReasonType; what: string }[] = [
    {
      image: bluePinnedImage(cluster) ?? imageOf(cluster),
      reason: R.ImageVerificationFailed,
      what: "OpenBao image",
    },
    { image: imageOf(cluster), reason: R.ImageVerificationFailed, what: "OpenBao image" },
    ...(green
      ? [
          {
            image: green.image,
            reason: R.BlueGreenImageVerificationFailed,
            what: "blue-green upgrade image",
          },
        ]
      : []),
  ];
  const pinned = new Map<string, string>();
  for (const w of wanted) {
    if (pinned.has(w.image)) continue;
    const out = await checkImage(deps.imageVerifier, ctx, cluster, { field: "imageVerification", ...w });
    if (out.kind === "blocked") return failedWith(out.reason, out.message);
    if (out.kind === "pinned") pinned.set(w.image, out.image);
  }
  return proceed({ pinnedImages: pinned });
}

type Obj = Record<string, unknown>;

/** `sts` running its OpenBao image pinned to the digest the images step verified, when it did. */
export function withPinnedImage(pass: Partial<Verified>, sts: Obj): Obj {
  const containers = ((sts["spec"] as Obj)["template"] as { spec: { containers: Obj[] } }).spec.containers;
  const image = containers[0]?.["image"];
  const pinned = typeof image === "string" ? pass.pinnedImages?.get(image) : undefined;
  return pinned ? withImage(sts, pinned) : sts;
}
