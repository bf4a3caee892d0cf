{{/*
Per-target pieces: the configuration section a target's process receives, and the RBAC rules the
target needs in each namespace it reconciles. Only what the target's code calls is granted; the
chart test compares these rules with the API server's audit log.
*/}}

{{/* Path where the vault target's projected backend token is mounted. */}}
{{- define "po.vaultTokenPath" -}}/var/run/secrets/platform-operator/vault/token{{- end -}}

{{- define "po.targetConfig" -}}
{{- $t := index .root.Values.targets .target -}}
{{- $cfg := deepCopy ($t.config | default dict) -}}
{{- $_ := set $cfg "namespaces" (splitList " " (include "po.namespaces" .)) -}}
{{- if eq .target "vault" -}}
{{- $k := dig "backend" "auth" "kubernetes" nil $cfg -}}
{{- if and $k (not (hasKey $k "tokenFile")) (not (hasKey $k "serviceAccount")) -}}
{{- $_ := set $k "tokenFile" (include "po.vaultTokenPath" .) -}}
{{- end -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* Rules in every namespace the target reconciles. */}}
{{- define "po.namespacedRules.vault" -}}
- apiGroups: [ohmlab.fr]
  resources: [vaultseeds]
  verbs: [list, watch, patch]
- apiGroups: [ohmlab.fr]
  resources: [vaultseeds/status]
  verbs: [patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{- define "po.namespacedRules.openbao" -}}
- apiGroups: [openbao.org]
  resources: [openbaoclusters, openbaorestores]
  verbs: [get, list, watch, patch]
- apiGroups: [openbao.org]
  resources: [openbaoclusters/status, openbaorestores/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [services, configmaps, secrets, serviceaccounts, persistentvolumeclaims]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, delete]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies, ingresses]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{- define "po.namespacedRules.gitlab" -}}
- apiGroups: [apps.gitlab.com]
  resources: [gitlabcores]
  verbs: [get, list, watch, patch]
- apiGroups: [apps.gitlab.com]
  resources: [gitlabcores/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [configmaps, services, serviceaccounts, persistentvolumeclaims, secrets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments, statefulsets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [gateway.networking.k8s.io]
  resources: [httproutes]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/* Cluster-scoped rules: each target reads only its own CRDs, by name. */}}
{{- define "po.clusterRules.vault" -}}
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  resourceNames: [vaultseeds.ohmlab.fr]
  verbs: [get]
{{- end -}}

{{- define "po.clusterRules.openbao" -}}
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  resourceNames: [openbaoclusters.openbao.org, openbaorestores.openbao.org]
  verbs: [get]
# Storage growth reads whether the volumes' class allows expansion (list: to find the default class).
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get, list]
{{- end -}}

{{- define "po.clusterRules.gitlab" -}}
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  resourceNames: [gitlabcores.apps.gitlab.com]
  verbs: [get]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses]
  verbs: [get, list, watch, create, patch, delete]
{{- end -}}

{{/* Every configuration section of a process, for the pod template's checksum. */}}
{{- define "po.targetConfigs" -}}
{{- range .targets }}{{ include "po.targetConfig" (dict "root" $.root "target" .) }}{{ end -}}
{{- end -}}
