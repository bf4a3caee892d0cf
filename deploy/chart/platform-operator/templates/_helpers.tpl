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
The namespaces a target reconciles (space-separated): those it lists, else the release's own. It
gets Roles there and nowhere else, and ignores objects in any other namespace.
*/}}
{{- define "po.namespaces" -}}
{{- $v := index .root.Values.targets .target -}}
{{- $ns := $v.namespaces | default (list .root.Release.Namespace) -}}
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
{{- printf "%s-%s" .root.Release.Name .proc | trunc 63 | trimSuffix "-" -}}
{{- end -}}

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
{{- $q := toString (dig "limits" "memory" "" .Values.resources) -}}
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
after ~64 MiB outside the heap, the semi-space shrinks with small limits.
*/}}
{{- define "po.nodeOptions" -}}
{{- $limit := include "po.memoryLimitMiB" . | atoi -}}
{{- if gt $limit 0 -}}
{{- $old := max 32 (div (mul (sub $limit 64) 3) 4) -}}
{{- $semi := 1 -}}
{{- if ge $limit 1024 }}{{ $semi = 16 }}{{ else if ge $limit 512 }}{{ $semi = 8 }}{{ else if ge $limit 256 }}{{ $semi = 4 }}{{ else if ge $limit 128 }}{{ $semi = 2 }}{{ end -}}
{{- printf "--max-old-space-size=%d --max-semi-space-size=%d" $old $semi -}}
{{- end -}}
{{- end -}}
