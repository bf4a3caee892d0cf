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
{{- with $t.applications -}}
{{- if hasKey $cfg "applications" -}}
{{- fail "targets.vault: set applications next to namespaces (targets.vault.applications), not under config" -}}
{{- end -}}
{{- $_ := set $cfg "applications" . -}}
{{- end -}}
{{- $k := dig "backend" "auth" "kubernetes" nil $cfg -}}
{{- if and $k (not (hasKey $k "tokenFile")) (not (hasKey $k "serviceAccount")) -}}
{{- $_ := set $k "tokenFile" (include "po.vaultTokenPath" .) -}}
{{- end -}}
{{- end -}}
{{- if and (eq .target "openbao") (not (hasKey $cfg "platform")) -}}
{{- /* platform (or controller.extraArgs' --platform), as upstream's chart hands it to its operator: auto is decided by the target at start. */ -}}
{{- $_ := set $cfg "platform" (include "po.effective" .root | fromYaml).platform -}}
{{- end -}}
{{- if and (eq .target "openbao") (not (hasKey $cfg "executorImage")) -}}
{{- /* Without it a backup or restore of a cluster naming no image of its own could not start. */ -}}
{{- $_ := set $cfg "executorImage" (include "po.executorImage" .root) -}}
{{- end -}}
{{- if and (eq .target "openbao") (not .root.Values.gatewayAPI.enabled) -}}
{{- /* No Gateway API RBAC is granted, so the target must not read those kinds either. */ -}}
{{- $_ := set $cfg "gatewayAPI" false -}}
{{- end -}}
{{- if and (eq .target "openbao") .root.Values.admissionPolicies.enabled -}}
{{- /* The bindings the target checks at start are this release's (templates/admission-policies.yaml). */ -}}
{{- $_ := set $cfg "admissionPolicies" (dict "prefix" (printf "%s-" (include "po.fullname" .root))) -}}
{{- end -}}
{{- if and (eq .target "openbao") (eq .root.Values.tenancy.mode "multi") -}}
{{- if hasKey $cfg "tenants" -}}
{{- fail "targets.openbao.config.tenants: set tenancy.mode: multi instead; the chart writes the section and grants its RBAC" -}}
{{- end -}}
{{- /* The tenant RoleBindings name this process's ServiceAccount, in the release's namespace. */ -}}
{{- $tenants := dict "enabled" true "serviceAccount" (include "po.name" (dict "root" .root "proc" .proc)) "operatorNamespace" .root.Release.Namespace -}}
{{- with .root.Values.tenancy.clusterSelector -}}
{{- $_ := set $tenants "clusterSelector" . -}}
{{- end -}}
{{- if eq (include "po.podSecurityLabelsMode" .root) "external" -}}
{{- $_ := set $tenants "namespacePodSecurityLabels" "external" -}}
{{- end -}}
{{- range $key, $items := include "po.deniedNamespaces" .root | fromYaml -}}
{{- $_ := set $tenants $key $items -}}
{{- end -}}
{{- $_ := set $cfg "tenants" $tenants -}}
{{- end -}}
{{- if and (eq .target "openbao") (not (hasKey $cfg "openBaoAudience")) -}}
{{- with .root.Values.serviceAccountToken.openBaoAudience -}}
{{- $_ := set $cfg "openBaoAudience" . -}}
{{- end -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
Upstream's admissionPolicies.provisionerRBAC lists (the keys given), trimmed, blanks dropped as
upstream does: what the tenant provisioner is told and what the namespace policy refuses.
*/}}
{{- define "po.deniedNamespaces" -}}
{{- $denied := default dict .Values.admissionPolicies.provisionerRBAC -}}
{{- $out := dict -}}
{{- range $key := list "deniedNamespaces" "deniedNamespacePrefixes" -}}
{{- if hasKey $denied $key -}}
{{- $items := list -}}
{{- range (default (list) (index $denied $key)) }}{{ with (toString . | trim) }}{{ $items = append $items . }}{{ end }}{{ end -}}
{{- $_ := set $out $key $items -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* tenancy.namespacePodSecurityLabels.mode: enforce unless set. */}}
{{- define "po.podSecurityLabelsMode" -}}
{{- dig "namespacePodSecurityLabels" "mode" "enforce" .Values.tenancy -}}
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

{{/*
The openbao target, as the chart-install test's audit log proves it: what one OpenBaoCluster's life
(create, initialize, scale, ingress off, a refused resize, delete with DeleteAll) calls. Children
are written by server-side apply (patch, and create: the API server also authorizes an apply that
creates the object as a create) and read through label-selected informers (list, watch)
or by name (get); garbage collection removes them with their cluster, so most kinds need no delete.
*/}}
{{- define "po.namespacedRules.openbao" -}}
# create, delete: restore tests (spec.backup.restoreTest) make a throwaway cluster and remove it.
- apiGroups: [openbao.org]
  resources: [openbaoclusters]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [openbao.org]
  resources: [openbaoclusters/status]
  verbs: [patch]
# The restore controller: its requests (finalizer by patch) and their status; create, delete: a
# restore test's request into its throwaway cluster.
- apiGroups: [openbao.org]
  resources: [openbaorestores]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [openbao.org]
  resources: [openbaorestores/status]
  verbs: [patch]
# Backup and restore executor Jobs: created once under a deterministic name, watched by label; the
# result is read off the Job's pod (termination message).
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create]
# The seal key is created once (create, never rewritten); the root token and TLS Secrets are
# applied; deletionPolicy DeleteAll deletes the seal key and root token. Read through an informer
# (list, watch); get only for a Secret this process just wrote and its watch has not shown yet.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [get, list, watch, create, patch]
# spec.upgrade.jwtAuthRole: a short-lived token of the cluster's upgrade ServiceAccount, presented
# to OpenBao's JWT auth for step-down and the Raft reads.
- apiGroups: [""]
  resources: [serviceaccounts/token]
  verbs: [create]
# deletionPolicy DeletePVCs/DeleteAll lists and deletes the data claims; a resize reads them;
# auditFileStorage and tls.acme.sharedCache in ManagedPVC mode create their shared claim.
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, create, patch, delete]
# get: pod 0's phase before init; list: an executor Job's pod, for its result; list and watch: the
# voter pods an upgrade waits on. update and patch are never called by the operator: RBAC lets it
# write the pods' own Role (get, update, patch on its pods) only if it holds those verbs itself.
# delete: after a restore, the cluster's pods are restarted so every node loads the restored data
# (its seal-wrapped keys and Raft TLS keyring) instead of what it kept in memory.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, update, patch, delete]
# delete: a blue-green upgrade deletes the revision that no longer serves (blue after Cleanup,
# green after a rollback).
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, patch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, patch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get, list, watch, create, patch, delete]
# IngressIntegrationReady: the IngressClass spec.ingress.className names must exist (cluster-scoped:
# granted by the ClusterRole only; a namespace-scoped install reports IngressCapabilitiesUnknown).
- apiGroups: [networking.k8s.io]
  resources: [ingressclasses]
  verbs: [get]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, patch]
# spec.gateway: routes and backend trust on an existing Gateway. Where (and once) the Gateway API
# is served, the cluster's own routes are watched by label (list, watch), since every pass also
# looks for a route this cluster made and no longer wants, with or without spec.gateway; get only
# for a route this process just wrote and its watch has not shown yet.
- apiGroups: [gateway.networking.k8s.io]
  resources: [httproutes, tlsroutes, backendtlspolicies]
  verbs: [get, list, watch, create, patch, delete]
# GatewayIntegrationReady: the Gateway spec.gateway refers to, watched (read-only) where served.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways]
  verbs: [get, list, watch]
# spec.observability.metrics: the cluster's ServiceMonitor, where the Prometheus Operator's CRD is
# served; delete when metrics are turned off again.
- apiGroups: [monitoring.coreos.com]
  resources: [servicemonitors]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/*
The openbao target reads the `kubernetes` Service and its EndpointSlices in `default` to write the
API-server egress rule of each cluster's NetworkPolicy (without them, every OpenBaoCluster must
name spec.network.apiServerCIDR or apiServerEndpointIPs).
*/}}
{{- define "po.apiServerRules.openbao" -}}
- apiGroups: [""]
  resources: [services]
  resourceNames: [kubernetes]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
{{- end -}}

{{/*
The gitlab target: its GitLabCores, the labelled ConfigMaps and Secrets it watches (versionRef,
chart.valuesFrom; its informers select operator.gitlab.com/config-source=true), and the kinds the GitLab
chart renders, written by server-side apply (patch) and read through one informer per kind
selecting the release label (list, watch): a quiet pass compares with that cache, prune reads its
inventory from it and deletes. Hooks (ConfigMaps, Jobs) are applied, read by name while they run
(get) and deleted.
*/}}
{{- define "po.namespacedRules.gitlab" -}}
# Read through the informer only (list, watch); patch: the finalizer.
- apiGroups: [apps.gitlab.com]
  resources: [gitlabcores]
  verbs: [list, watch, patch]
- apiGroups: [apps.gitlab.com]
  resources: [gitlabcores/status]
  verbs: [patch]
# GitLabSecrets: applied and pruned as part of a release (the chart renders one with
# shared-secrets.provider: controller), and reconciled into Secrets (status).
- apiGroups: [apps.gitlab.com]
  resources: [gitlabsecrets]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [apps.gitlab.com]
  resources: [gitlabsecrets/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, patch, delete]
# list, watch: the labelled informer (spec.chart.valuesFrom) and a metadata-only one (a Secret a
# GitLabSecrets declares, deleted or edited); get, create, patch: GitLabSecrets fills in missing
# Secrets and keys. Never update or delete: an existing value is never replaced or removed.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, patch]
- apiGroups: [""]
  resources: [services]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments, statefulsets]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
# list: while an upgrade step waits on a restartPolicy OnFailure migrations Job (the real chart's),
# its pods' container restarts are its failed attempts (Retrying* reasons). Read only.
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways, httproutes]
  verbs: [list, watch, create, patch, delete]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/* Cluster-scoped rules: vault reads its own CRD by name; openbao watches CRDs' metadata only. */}}
{{- define "po.clusterRules.vault" -}}
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  resourceNames: [vaultseeds.ohmlab.fr]
  verbs: [get]
{{- end -}}

{{/* The openbao target: StorageClasses (read when a cluster asks for more storage) from an
informer, and the CRDs' metadata so discovery's answers are refreshed only when one changes. */}}
{{- define "po.clusterRules.openbao" -}}
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get, list, watch]
# GatewayIntegrationReady: the class of the Gateway spec.gateway refers to, watched where served.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses]
  verbs: [get, list, watch]
# Discovery's "not served" answers (is the Gateway API installed?) are kept until a CRD appears or
# goes: a metadata-only watch of them.
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [list, watch]
{{- end -}}

{{/*
tenancy.mode multi, in each namespace the openbao target reconciles: the OpenBaoTenants there
(self-service: a tenant may onboard only its own namespace), read through an informer, their
finalizer (patch) and status. The provisioned tenant's own Role carries the same (tenant/rules.ts).
*/}}
{{- define "po.tenantRules.openbao" -}}
- apiGroups: [openbao.org]
  resources: [openbaotenants]
  verbs: [get, list, watch, patch]
- apiGroups: [openbao.org]
  resources: [openbaotenants/status]
  verbs: [patch]
{{- end -}}

{{/*
tenancy.mode multi, cluster-wide. What the openbao target needs everywhere: to see every
OpenBaoCluster and tell one whose namespace no tenant onboards why it waits (its status and a
Warning event; nothing else there). What the provisioner needs to onboard any namespace: to read
it and set its Pod Security labels (only read it, namespacePodSecurityLabels external), to read
the clusters and restores there (the Secret allow-lists),
the quota and limit range by their names, and the three tenant Roles and their bindings by name.
Kubernetes refuses to let anyone write a Role granting more than it holds, or bind one: instead of
holding everything the tenant Role grants in every namespace, the process may `escalate` and `bind`
only those three Role names.
*/}}
{{- define "po.tenancyClusterRules.openbao" -}}
- apiGroups: [openbao.org]
  resources: [openbaoclusters]
  verbs: [get, list, watch]
- apiGroups: [openbao.org]
  resources: [openbaoclusters/status]
  verbs: [patch]
- apiGroups: [openbao.org]
  resources: [openbaorestores]
  verbs: [list]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# list, watch: read from informers, so a settled tenant's pass sends no request. patch: the Pod
# Security labels, not with namespacePodSecurityLabels external (the namespace is never written).
- apiGroups: [""]
  resources: [namespaces]
  {{- if eq (include "po.podSecurityLabelsMode" .) "external" }}
  verbs: [get, list, watch]
  {{- else }}
  verbs: [get, list, watch, patch]
  {{- end }}
- apiGroups: [""]
  resources: [resourcequotas, limitranges]
  verbs: [list, watch, create]
- apiGroups: [""]
  resources: [resourcequotas, limitranges]
  resourceNames: [openbao-operator-tenant-quota, openbao-operator-tenant-limits]
  verbs: [get, patch]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles]
  resourceNames: [openbao-operator-tenant-role, openbao-operator-tenant-secrets-writer, openbao-operator-tenant-secrets-reader]
  verbs: [get, patch, delete, escalate, bind]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings]
  resourceNames: [openbao-operator-tenant-rolebinding, openbao-operator-tenant-secrets-writer-rolebinding, openbao-operator-tenant-secrets-reader-rolebinding]
  verbs: [get, patch, delete]
{{- end -}}

{{/* The gitlab target reads no CRD; the GatewayClass its chart renders is cluster-scoped. */}}
{{- define "po.clusterRules.gitlab" -}}
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses]
  verbs: [list, watch, create, patch, delete]
{{- end -}}

{{/* Every configuration section of a process, for the pod template's checksum. */}}
{{- define "po.targetConfigs" -}}
{{- range .targets }}{{ include "po.targetConfig" (dict "root" $.root "target" . "proc" $.proc) }}{{ end -}}
{{- end -}}

{{/*
The rules of the named block (.name) for the chart's values (.root): as written, or, with
gatewayAPI.enabled false, without any rule on the Gateway API's group. The blocks stay plain YAML
(tests read them as such).
*/}}
{{- define "po.rules" -}}
{{- $text := include .name .root -}}
{{- if .root.Values.gatewayAPI.enabled -}}
{{- $text -}}
{{- else -}}
{{- $kept := list -}}
{{- range (fromYamlArray $text) -}}
{{- if not (has "gateway.networking.k8s.io" .apiGroups) -}}
{{- $kept = append $kept . -}}
{{- end -}}
{{- end -}}
{{- if $kept }}{{ toYaml $kept }}{{ end -}}
{{- end -}}
{{- end -}}
