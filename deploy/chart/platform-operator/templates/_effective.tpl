{{/*
The values the operator's pods are rendered from: this chart's own names, with upstream
openbao-operator's names for the same things (controller.*, healthProbes.*, platform,
controller.extraArgs) applied over them, so a values file written for upstream's chart installs
unchanged. Maps merge (upstream's key wins), lists are appended, scalars and resources replace.
Every template reads these instead of .Values for what upstream can also set.
*/}}
{{- define "po.effective" -}}
{{- $v := .Values -}}
{{- $c := $v.controller | default dict -}}
{{- $out := dict -}}
{{- $_ := set $out "replicas" (hasKey $c "replicas" | ternary $c.replicas $v.replicas) -}}
{{- $_ := set $out "replicasFrom" (hasKey $c "replicas" | ternary "controller.replicas" "replicas") -}}
{{- $_ := set $out "resources" (hasKey $c "resources" | ternary $c.resources $v.resources) -}}
{{- $_ := set $out "affinity" (hasKey $c "affinity" | ternary $c.affinity $v.affinity) -}}
{{- range $k := list "nodeSelector" "podAnnotations" "podLabels" -}}
{{- $_ := set $out $k (mergeOverwrite (deepCopy (index $v $k | default dict)) (index $c $k | default dict)) -}}
{{- end -}}
{{- $_ := set $out "serviceAccountAnnotations" (mergeOverwrite (deepCopy ($v.serviceAccount.annotations | default dict)) (dig "serviceAccount" "annotations" dict $c)) -}}
{{- $_ := set $out "tolerations" (concat ($v.tolerations | default list) ($c.tolerations | default list)) -}}
{{- /* extraEnv keeps where each entry came from, for errors that name the value. */ -}}
{{- $env := list -}}
{{- range $i, $e := ($v.extraEnv | default list) }}{{ $env = append $env (dict "from" (printf "extraEnv[%d]" $i) "env" $e) }}{{ end -}}
{{- range $i, $e := ($c.extraEnv | default list) }}{{ $env = append $env (dict "from" (printf "controller.extraEnv[%d]" $i) "env" $e) }}{{ end -}}
{{- $_ := set $out "extraEnv" $env -}}
{{- $args := include "po.upstreamArgs" . | fromYaml -}}
{{- $_ := set $out "logLevel" ($args.logLevel | default $v.logLevel) -}}
{{- $platform := $args.platform | default $v.platform -}}
{{- $_ := set $out "platform" $platform -}}
{{- /* Security contexts: this chart's defaults, then upstream's over them. Under OpenShift's SCCs
(platform openshift, or auto where its security API is served) the SCC assigns the ids. */ -}}
{{- $openshift := or (eq $platform "openshift") (and (eq $platform "auto") (.Capabilities.APIVersions.Has "security.openshift.io/v1")) -}}
{{- range $k := list "podSecurityContext" "securityContext" -}}
{{- $sc := mergeOverwrite (deepCopy (index $v $k | default dict)) (deepCopy (index $c $k | default dict)) -}}
{{- if $openshift }}{{ $sc = omit $sc "runAsUser" "runAsGroup" "fsGroup" }}{{ end -}}
{{- $_ := set $out $k $sc -}}
{{- $_ := set $out (printf "%sFrom" $k) (hasKey $c $k | ternary (printf "controller.%s" $k) $k) -}}
{{- end -}}
{{- $_ := set $out "probes" (mergeOverwrite (deepCopy $v.probes) ($v.healthProbes | default dict)) -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
upstream's controller.extraArgs: its Go operator's flags. The two with a meaning here are taken
(--zap-log-level as logLevel, --platform as platform); any other fails, naming it, rather than
reaching a process that would refuse it at start.
*/}}
{{- define "po.upstreamArgs" -}}
{{- $out := dict -}}
{{- $levels := dict "debug" "debug" "info" "info" "error" "error" "panic" "error" -}}
{{- range $i, $a := (dig "extraArgs" list (.Values.controller | default dict)) -}}
{{- $a = toString $a -}}
{{- if regexMatch "^--?zap-log-level=" $a -}}
{{- $l := regexReplaceAll "^--?zap-log-level=" $a "" -}}
{{- if hasKey $levels $l }}{{ $_ := set $out "logLevel" (get $levels $l) }}
{{- else if regexMatch "^[1-9][0-9]*$" $l }}{{ $_ := set $out "logLevel" "debug" }}
{{- else }}{{ fail (printf "controller.extraArgs[%d]: --zap-log-level takes debug, info, error, panic or a verbosity above 0, not %q" $i $l) }}{{ end -}}
{{- else if regexMatch "^--?platform=" $a -}}
{{- $p := regexReplaceAll "^--?platform=" $a "" -}}
{{- if not (has $p (list "auto" "kubernetes" "openshift")) }}{{ fail (printf "controller.extraArgs[%d]: --platform takes auto, kubernetes or openshift, not %q" $i $p) }}{{ end -}}
{{- $_ := set $out "platform" $p -}}
{{- else -}}
{{- fail (printf "controller.extraArgs[%d]: %q is a flag of upstream's Go operator with no equivalent here; this chart takes --zap-log-level and --platform (as logLevel and platform), the rest are its own values (README: Coming from upstream's openbao-operator chart)" $i $a) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
The prefix of every object name: fullnameOverride, else the release name followed by nameOverride
(unless the release name holds it already), else the release name: upstream's rule, with this
chart's name standing in only when nameOverride is set.
*/}}
{{- define "po.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if and .Values.nameOverride (not (contains .Values.nameOverride .Release.Name)) -}}
{{- printf "%s-%s" .Release.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- .Release.Name -}}
{{- end -}}
{{- end -}}

{{/*
The openbao target's executor image (backup, restore Jobs) when its configuration names none: the
operator's own image, which carries the executor subcommand, tagged operatorVersion when set.
*/}}
{{- define "po.executorImage" -}}
{{- if .Values.operatorVersion -}}
{{- printf "%s:%s" .Values.image.repository .Values.operatorVersion -}}
{{- else -}}
{{- include "po.image" . -}}
{{- end -}}
{{- end -}}
