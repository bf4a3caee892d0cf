{{/* The targets this chart knows, in a fixed order. */}}
{{- define "po.knownTargets" -}}vault openbao gitlab{{- end -}}

{{/* Enabled targets, as a space-separated list. */}}
{{- define "po.enabledTargets" -}}
{{- $out := list -}}
{{- range $t := splitList " " (include "po.knownTargets" .) -}}
{{- $v := index $.Values.targets $t | default dict -}}
{{- if $v.enabled -}}
{{- $out = append $out $t -}}
{{- end -}}
{{- end -}}
{{- join " " $out -}}
{{- end -}}

{{/*
The namespaces a target reconciles (space-separated): those it lists, else the release's own (the
openbao target's: tenancy.targetNamespace in single mode when set). It
gets Roles there and nowhere else, and ignores objects in any other namespace.
*/}}
{{- define "po.namespaces" -}}
{{- $v := index .root.Values.targets .target -}}
{{- $default := .root.Release.Namespace -}}
{{- /* upstream's single-tenant install names its one namespace tenancy.targetNamespace. */ -}}
{{- if and (eq .target "openbao") (eq .root.Values.tenancy.mode "single") .root.Values.tenancy.targetNamespace -}}
{{- $default = .root.Values.tenancy.targetNamespace -}}
{{- end -}}
{{- $ns := $v.namespaces | default (list $default) -}}
{{- /* The vault target's application namespaces are watched too, each with its own Role. */ -}}
{{- if eq .target "vault" -}}
{{- range $app, $_ := ($v.applications | default dict) -}}
{{- if has $app $ns -}}
{{- fail (printf "targets.vault.applications.%s: the namespace is also in targets.vault.namespaces; a namespace is either a platform one or an application one" $app) -}}
{{- end -}}
{{- $ns = append $ns $app -}}
{{- end -}}
{{- end -}}
{{- join " " $ns -}}
{{- end -}}

{{/*
Processes: a map from process name to the targets it runs. Split by default (one process per enabled
target); `deployments` groups them, and every enabled target must appear in exactly one process.
*/}}
{{- define "po.processes" -}}
{{- $enabled := compact (splitList " " (include "po.enabledTargets" .)) -}}
{{- $out := dict -}}
{{- if not .Values.deployments -}}
{{- range $enabled }}{{- $_ := set $out . (list .) -}}{{- end -}}
{{- else -}}
{{- $seen := dict -}}
{{- range $proc, $targets := .Values.deployments -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $proc) -}}
{{- fail (printf "deployments.%s: a process name must be a DNS label (lower-case letters, digits, '-')" $proc) -}}
{{- end -}}
{{- if not $targets -}}
{{- fail (printf "deployments.%s: list at least one target" $proc) -}}
{{- end -}}
{{- range $targets -}}
{{- if not (has . $enabled) -}}
{{- fail (printf "deployments.%s: %q is not an enabled target (enabled: %s)" $proc . (join ", " $enabled)) -}}
{{- end -}}
{{- if hasKey $seen . -}}
{{- fail (printf "deployments: target %q is in both %s and %s; every enabled target runs in exactly one process" . (get $seen .) $proc) -}}
{{- end -}}
{{- $_ := set $seen . $proc -}}
{{- end -}}
{{- $_ := set $out $proc $targets -}}
{{- end -}}
{{- range $enabled -}}
{{- if not (hasKey $seen .) -}}
{{- fail (printf "deployments: the enabled target %q is in no process; list it under one" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "po.name" -}}
{{- printf "%s-%s" (include "po.fullname" .root) .proc | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The gitlab target's keyring ConfigMap, its file, and where the process that runs the target mounts it. */}}
{{- define "po.chartKeyringName" -}}
{{- printf "%s-chart-keyring" (include "po.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "po.chartKeyringFile" -}}keyring.asc{{- end -}}
{{- define "po.chartKeyringDir" -}}/etc/platform-operator/chart-keyring{{- end -}}

{{- define "po.labels" -}}
app.kubernetes.io/name: platform-operator
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .proc }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "po.selector" -}}
app.kubernetes.io/name: platform-operator
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .proc }}
{{- end -}}

{{/*
Memory limit in MiB from resources.limits.memory (Ki, Mi, Gi, K, M, G or bytes); 0 when unset or
in a unit this helper does not read.
*/}}
{{- define "po.memoryLimitMiB" -}}
{{- $q := toString (dig "limits" "memory" "" (include "po.effective" . | fromYaml).resources) -}}
{{- $mib := 0 -}}
{{- if regexMatch "^[0-9]+Gi$" $q -}}{{- $mib = mul (trimSuffix "Gi" $q | atoi) 1024 -}}
{{- else if regexMatch "^[0-9]+Mi$" $q -}}{{- $mib = trimSuffix "Mi" $q | atoi -}}
{{- else if regexMatch "^[0-9]+Ki$" $q -}}{{- $mib = div (trimSuffix "Ki" $q | atoi) 1024 -}}
{{- else if regexMatch "^[0-9]+G$" $q -}}{{- $mib = div (mul (trimSuffix "G" $q | atoi) 1000000000) 1048576 -}}
{{- else if regexMatch "^[0-9]+M$" $q -}}{{- $mib = div (mul (trimSuffix "M" $q | atoi) 1000000) 1048576 -}}
{{- else if regexMatch "^[0-9]+$" $q -}}{{- $mib = div ($q | atoi) 1048576 -}}
{{- end -}}
{{- $mib -}}
{{- end -}}

{{/*
V8 heap flags for the container's memory limit, the same rule as `platform-operator node-options`
(the image has no shell to run that command at start): old space gets three quarters of what is left
after ~64 MiB outside the heap, the semi-space is 1 MiB per 256 MiB of limit (1 to 16).
*/}}
{{- define "po.nodeOptions" -}}
{{- $limit := include "po.memoryLimitMiB" . | atoi -}}
{{- if gt $limit 0 -}}
{{- $old := max 32 (div (mul (sub $limit 64) 3) 4) -}}
{{- $semi := 1 -}}
{{- if ge $limit 4096 }}{{ $semi = 16 }}{{ else if ge $limit 2048 }}{{ $semi = 8 }}{{ else if ge $limit 1024 }}{{ $semi = 4 }}{{ else if ge $limit 512 }}{{ $semi = 2 }}{{ end -}}
{{- printf "--max-old-space-size=%d --max-semi-space-size=%d" $old $semi -}}
{{- end -}}
{{- end -}}

{{/*
A label or annotation map: the chart's own (.own, a map) and the user's (.extra, from the value
named .from), each key once. Post-renderers such as kustomize (Flux) refuse a map holding a key
twice, so the user's keys are merged here, and one the chart sets is refused with its value named.
*/}}
{{- define "po.mergeMap" -}}
{{- $out := deepCopy .own -}}
{{- range $k, $v := (.extra | default dict) -}}
{{- if hasKey $out $k -}}
{{- fail (printf "%s.%s: the chart sets this key itself (to %q); choose another" $.from $k (toString (get $out $k))) -}}
{{- end -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* po.labels of a process plus monitoring.labels. */}}
{{- define "po.monitoringLabels" -}}
{{- include "po.mergeMap" (dict "own" (include "po.labels" . | fromYaml) "extra" .root.Values.monitoring.labels "from" "monitoring.labels") -}}
{{- end -}}

{{/* The operator image: repository@digest when a digest is set, else repository:tag (the chart's appVersion when the tag is empty, as upstream's chart reads it). */}}
{{- define "po.image" -}}
{{- with .Values.image.digest -}}
{{- printf "%s@%s" $.Values.image.repository . -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* Whether this release serves /metrics over HTTPS with the chart's certificate Secret ("true" or ""). */}}
{{- define "po.metricsSecret" -}}
{{- if and .Values.metrics.enabled .Values.metrics.secure (eq .Values.metrics.certificate "chart") }}true{{ end -}}
{{- end -}}

{{/*
Checks of values the schema cannot express; each failure names the value. Security contexts: the
schema refuses values Pod Security restricted does not admit, and here the merged result must
still say what restricted requires (a default removed with null is refused as well).
*/}}
{{- define "po.checkValues" -}}
{{- $e := include "po.effective" . | fromYaml -}}
{{- if and (not .Values.leaderElection.enabled) (gt (int $e.replicas) 1) -}}
{{- fail (printf "leaderElection.enabled: false needs %s: 1 (it is %d: several replicas without a leader would all reconcile and write)" $e.replicasFrom (int $e.replicas)) -}}
{{- end -}}
{{- $pod := $e.podSecurityContext | default dict -}}
{{- $ctr := $e.securityContext | default dict -}}
{{- $podName := $e.podSecurityContextFrom -}}
{{- $ctrName := $e.securityContextFrom -}}
{{- if not (or (eq (toString $pod.runAsNonRoot) "true") (eq (toString $ctr.runAsNonRoot) "true")) -}}
{{- fail (printf "%s.runAsNonRoot / %s.runAsNonRoot: Pod Security restricted needs runAsNonRoot: true in one of them" $ctrName $podName) -}}
{{- end -}}
{{- if not (or (dig "seccompProfile" "type" "" $pod) (dig "seccompProfile" "type" "" $ctr)) -}}
{{- fail (printf "%s.seccompProfile / %s.seccompProfile: Pod Security restricted needs a seccomp profile (RuntimeDefault or Localhost) in one of them" $podName $ctrName) -}}
{{- end -}}
{{- if ne (toString $ctr.allowPrivilegeEscalation) "false" -}}
{{- fail (printf "%s.allowPrivilegeEscalation: Pod Security restricted needs false" $ctrName) -}}
{{- end -}}
{{- if not (has "ALL" (dig "capabilities" "drop" list $ctr)) -}}
{{- fail (printf "%s.capabilities.drop: Pod Security restricted needs [ALL]" $ctrName) -}}
{{- end -}}
{{- if ne (toString $ctr.readOnlyRootFilesystem) "true" -}}
{{- fail (printf "%s.readOnlyRootFilesystem: must stay true (the operator writes only to its /tmp emptyDir)" $ctrName) -}}
{{- end -}}
{{- $own := list "NODE_ENV" "NODE_OPTIONS" "MALLOC_ARENA_MAX" "POD_NAME" "POD_NAMESPACE" -}}
{{- if .Values.targets.gitlab.enabled -}}
{{- /* The chart points the gitlab target at its keyring ConfigMap (dynamicChartPull.trustedKeys). */ -}}
{{- $own = append $own "DYNAMIC_CHART_KEYRING" -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $e.extraEnv -}}
{{- if has .env.name $own -}}
{{- fail (printf "%s.name: %s is set by the chart itself (%s)" .from .env.name (join ", " $own)) -}}
{{- end -}}
{{- if hasKey $seen .env.name -}}
{{- fail (printf "%s.name: %s is already set by %s" .from .env.name (get $seen .env.name)) -}}
{{- end -}}
{{- $_ := set $seen .env.name .from -}}
{{- end -}}
{{- end -}}
