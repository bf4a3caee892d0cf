import { VALIDATING_WEBHOOK_CONFIGURATION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";

/**
 * A ValidatingWebhookConfiguration that sends one kind's creates and updates in `namespace` to the
 * operator's webhook on loopback, failing closed, as the chart registers it. The operator puts its
 * CA into it (call its webhook's refresh once this exists).
 */
export async function registerValidatingWebhook(
  client: KubeClient,
  w: {
    configuration: string;
    webhook: string;
    port: number;
    group: string;
    resource: string;
    namespace: string;
  },
): Promise<void> {
  await client.create(VALIDATING_WEBHOOK_CONFIGURATION, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: w.configuration },
    webhooks: [
      {
        name: w.webhook,
        clientConfig: { url: `https://127.0.0.1:${w.port}/validate` },
        rules: [
          {
            apiGroups: [w.group],
            apiVersions: ["*"],
            operations: ["CREATE", "UPDATE"],
            resources: [w.resource],
            scope: "Namespaced",
          },
        ],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.namespace } },
        failurePolicy: "Fail",
        sideEffects: "None",
        matchPolicy: "Equivalent",
        timeoutSeconds: 5,
        admissionReviewVersions: ["v1"],
      },
    ],
  });
}
