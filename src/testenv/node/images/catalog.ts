import { BAO_VERSIONS, KUBERNETES_VERSION } from "../../cache.js";
import { COREDNS_VERSION } from "../versions.js";
import type { ImageSpec } from "./archive.js";
import { baseLayer, dir, hostFile, type ImageUser, sharedLibraries, textFile } from "./rootfs.js";

// The images the node runs, under the names real manifests use, so `IfNotPresent` never pulls.

export const PAUSE_TAGS = ["registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10.1"];
export const BUSYBOX_IMAGE = "docker.io/library/busybox:1.35.0";
export const KUBECTL_IMAGE = `registry.k8s.io/kubectl:${KUBERNETES_VERSION}`;
// Not the upstream name: this build carries only the plugins the node's DNS needs.
export const COREDNS_IMAGE = `localhost/platform-operator/coredns:${COREDNS_VERSION}`;
export const openbaoImages = (version: string) => [
  `docker.io/openbao/openbao:${version}`,
  `quay.io/openbao/openbao:${version}`,
];

export interface CatalogInputs {
  bao: Record<string, string>;
  kubectl: string;
  coredns: string;
}

// The upstream OpenBao image's user: uid 100 in group openbao (1000).
const OPENBAO_USER: ImageUser = { name: "openbao", uid: 100, gid: 1000, home: "/home/openbao" };

// Runs `bao` for its subcommands and flags, anything else as given — the upstream image's contract
// (`IMAGE server -dev`, `IMAGE bao status`, `IMAGE sh`).
const OPENBAO_ENTRYPOINT = `#!/bin/sh
case "$1" in
  -*) set -- bao "$@" ;;
  "") set -- bao ;;
  *) command -v "$1" >/dev/null 2>&1 || set -- bao "$@" ;;
esac
exec "$@"
`;

// Holds the pod's namespaces and nothing else; exits at once on TERM like the real pause.
const PAUSE_SCRIPT = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

export function imageCatalog(inputs: CatalogInputs): ImageSpec[] {
  const specs: ImageSpec[] = [
    {
      name: "pause",
      tags: PAUSE_TAGS,
      layers: [baseLayer()],
      config: { Entrypoint: ["/bin/sh", "-c", PAUSE_SCRIPT], User: "65534:65534" },
    },
    {
      name: "busybox",
      tags: [BUSYBOX_IMAGE],
      layers: [baseLayer()],
      config: { Cmd: ["sh"], Env: ["PATH=/usr/local/bin:/usr/bin:/bin"] },
    },
    {
      name: "kubectl",
      tags: [KUBECTL_IMAGE],
      layers: [baseLayer(), [...sharedLibraries(inputs.kubectl), hostFile("/bin/kubectl", inputs.kubectl)]],
      config: { Entrypoint: ["/bin/kubectl"], Env: ["PATH=/usr/local/bin:/usr/bin:/bin"] },
    },
    {
      name: "coredns",
      tags: [COREDNS_IMAGE],
      layers: [baseLayer(), [hostFile("/coredns", inputs.coredns)]],
      config: { Entrypoint: ["/coredns"] },
    },
  ];
  for (const version of BAO_VERSIONS) {
    const bao = inputs.bao[version];
    if (!bao) continue;
    const owned = { uid: OPENBAO_USER.uid, gid: OPENBAO_USER.gid };
    specs.push({
      name: `openbao-${version}`,
      tags: openbaoImages(version),
      layers: [
        baseLayer([OPENBAO_USER]),
        [
          hostFile("/bin/bao", bao),
          textFile("/usr/local/bin/docker-entrypoint.sh", OPENBAO_ENTRYPOINT, 0o755),
          dir("/openbao", 0o755, owned),
          dir("/openbao/config", 0o755, owned),
          dir("/openbao/file", 0o755, owned),
          dir("/openbao/logs", 0o755, owned),
        ],
      ],
      config: {
        Entrypoint: ["/usr/local/bin/docker-entrypoint.sh"],
        Cmd: ["server", "-dev"],
        Env: ["PATH=/usr/local/bin:/usr/bin:/bin"],
      },
    });
  }
  return specs;
}
