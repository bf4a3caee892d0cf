import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";

/** A throwaway CUSTOM_RESOURCE_DEFINITION with a status subresource, for runtime tests that must not depend on a target's kinds. */
export const WIDGET: ResourceType = {
  group: "test.platform-operator.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

export async function installWidgetCrd(client: KubeClient): Promise<void> {
  await client.apply(
    CUSTOM_RESOURCE_DEFINITION,
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${WIDGET.plural}.${WIDGET.group}` },
      spec: {
        group: WIDGET.group,
        scope: "Namespaced",
        names: { plural: WIDGET.plural, singular: "widget", kind: WIDGET.kind, listKind: "WidgetList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    properties: { size: { type: "integer" }, color: { type: "string" } },
                  },
                  status: {
                    type: "object",
                    properties: { phase: { type: "string" }, seen: { type: "integer" } },
                  },
                },
              },
            },
          },
        ],
      },
    },
    { fieldManager: "test-setup", force: true },
  );
  // Established takes a moment; discovery must see the kind before the tests use it.
  for (let i = 0; i < 100; i++) {
    client.resources.refresh();
    if (await client.resources.find(`${WIDGET.group}/${WIDGET.version}`, WIDGET.kind)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("Widget CUSTOM_RESOURCE_DEFINITION was not served within 10 s");
}
