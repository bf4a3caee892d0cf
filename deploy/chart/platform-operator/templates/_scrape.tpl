{{/*
A Prometheus duration (1h30m, 30s, 500ms, as the schema admits) in milliseconds, so two of them can
be compared.
*/}}
{{- define "po.durationMs" -}}
{{- $ms := dict "y" 31536000000 "w" 604800000 "d" 86400000 "h" 3600000 "m" 60000 "s" 1000 "ms" 1 -}}
{{- $total := 0 -}}
{{- range $part := regexFindAll "[0-9]+(ms|[ywdhms])" (toString .) -1 -}}
{{- $unit := regexFind "[a-z]+$" $part -}}
{{- $total = add $total (mul (trimSuffix $unit $part | atoi) (get $ms $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
The endpoint a ServiceMonitor or VMServiceScrape scrapes in a process's metrics Service. .cfg is
metrics.serviceMonitor or metrics.victoriaMetrics, .from its name; .secretRefs: whether the kind
takes upstream's CA/client certificate Secrets (ServiceMonitor only, as upstream's chart).
Secure: HTTPS with the scraper's own ServiceAccount token, as upstream's chart scrapes (metrics.rbac
grants that ServiceAccount GET /metrics). Not secure: plain HTTP and no token, which would otherwise
cross the network in clear.
*/}}
{{- define "po.scrapeEndpoint" -}}
{{- $cfg := .cfg -}}
{{- $interval := $cfg.interval | default "30s" -}}
{{- $timeout := $cfg.scrapeTimeout | default "10s" -}}
{{- /* Prometheus refuses a scrape timeout longer than its interval; the Prometheus Operator then
     skips the object and nothing is scraped, with no word in the release. */ -}}
{{- if gt (include "po.durationMs" $timeout | atoi) (include "po.durationMs" $interval | atoi) -}}
{{- fail (printf "%s.scrapeTimeout: %s is longer than %s.interval (%s); a scraper refuses that" .from $timeout .from $interval) -}}
{{- end -}}
- port: metrics
  path: /metrics
  interval: {{ $interval }}
  scrapeTimeout: {{ $timeout }}
  {{- if .root.Values.metrics.secure }}
  {{- $tls := $cfg.tlsConfig | default dict }}
  scheme: https
  bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
  tlsConfig:
    {{- /* true unless set false: the certificate is self-signed (a value removed with null is the default). */}}
    insecureSkipVerify: {{ ne (toString $tls.insecureSkipVerify) "false" }}
    {{- with $tls.serverName }}
    serverName: {{ . | quote }}
    {{- end }}
    {{- if .secretRefs }}
    {{- with $tls.caSecret }}{{ if .name }}
    ca: { secret: { name: {{ .name | quote }}, key: {{ .key | default "ca.crt" | quote }} } }
    {{- end }}{{ end }}
    {{- with $tls.certSecret }}{{ if .name }}
    cert: { secret: { name: {{ .name | quote }}, key: {{ .key | default "tls.crt" | quote }} } }
    {{- end }}{{ end }}
    {{- with $tls.keySecret }}{{ if .name }}
    keySecret: { name: {{ .name | quote }}, key: {{ .key | default "tls.key" | quote }} }
    {{- end }}{{ end }}
    {{- end }}
  {{- else }}
  scheme: http
  {{- end }}
{{- end -}}
