{{/*
Naming. compoworld.dnsSegment and compoworld.fitName mirror
compoworld/deploy/naming.py (dns_segment, fit_name) exactly; a test compares them.
*/}}

{{- define "compoworld.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Prefix of every object name: the release name unless overridden. */}}
{{- define "compoworld.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A service name as a DNS-1123 segment: lower case, runs of other characters become "-". */}}
{{- define "compoworld.dnsSegment" -}}
{{- $s := regexReplaceAll "[^a-z0-9-]+" (lower .) "-" | trimAll "-" -}}
{{- if not $s -}}
{{- fail (printf "service name %q has no character usable in a DNS name" .) -}}
{{- end -}}
{{- $s -}}
{{- end -}}

{{/* A name cut to 63 characters: the head plus "-" and 8 hex digits of the full name's sha256. */}}
{{- define "compoworld.fitName" -}}
{{- if le (len .) 63 -}}
{{- . -}}
{{- else -}}
{{- printf "%s-%s" (trunc 54 . | trimAll "-") (sha256sum . | trunc 8) -}}
{{- end -}}
{{- end -}}

{{- define "compoworld.orchestratorName" -}}
{{- include "compoworld.fitName" (printf "%s-orchestrator" (include "compoworld.fullname" .)) -}}
{{- end -}}

{{- define "compoworld.serviceUrlsName" -}}
{{- include "compoworld.fitName" (printf "%s-service-urls" (include "compoworld.fullname" .)) -}}
{{- end -}}

{{- define "compoworld.adminSecretName" -}}
{{- if .Values.adminToken.existingSecret -}}
{{- .Values.adminToken.existingSecret -}}
{{- else -}}
{{- include "compoworld.fitName" (printf "%s-admin-token" (include "compoworld.fullname" .)) -}}
{{- end -}}
{{- end -}}

{{- define "compoworld.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* Kubernetes recommended labels. */}}
{{- define "compoworld.selectorLabels" -}}
app.kubernetes.io/name: {{ include "compoworld.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "compoworld.labels" -}}
{{ include "compoworld.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: compoworld
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
The service workloads, as JSON {"items": [{name, component, services, urls}]}:
one per service, or ceil(len/servicesPerPod) packs of the sorted names.
Fails on two services that map to the same DNS name.
*/}}
{{- define "compoworld.workloads" -}}
{{- $full := include "compoworld.fullname" . -}}
{{- $host := printf "%s.svc.%s:8000" .Release.Namespace .Values.clusterDomain -}}
{{- $names := .Values.services | default list | sortAlpha -}}
{{- $per := int .Values.packing.servicesPerPod -}}
{{- $seen := dict -}}
{{- range $names -}}
{{- $seg := include "compoworld.dnsSegment" . -}}
{{- if hasKey $seen $seg -}}
{{- fail (printf "services %q and %q both map to the DNS name %q; rename one" (get $seen $seg) . $seg) -}}
{{- end -}}
{{- $_ := set $seen $seg . -}}
{{- end -}}
{{- $items := list -}}
{{- if le $per 1 -}}
{{- range $names -}}
{{- $name := include "compoworld.fitName" (printf "%s-svc-%s" $full (include "compoworld.dnsSegment" .)) -}}
{{- $urls := dict . (printf "http://%s.%s" $name $host) -}}
{{- $items = append $items (dict "name" $name "component" "service" "services" (list .) "urls" $urls) -}}
{{- end -}}
{{- else -}}
{{- range $i, $pack := chunk $per $names -}}
{{- $name := include "compoworld.fitName" (printf "%s-pack-%d" $full $i) -}}
{{- $urls := dict -}}
{{- range $pack -}}
{{- $_ := set $urls . (printf "http://%s.%s/services/%s" $name $host .) -}}
{{- end -}}
{{- $items = append $items (dict "name" $name "component" "pack" "services" $pack "urls" $urls) -}}
{{- end -}}
{{- end -}}
{{- dict "items" $items | toJson -}}
{{- end -}}

{{/* Env entries every pod gets: the admin token from its Secret. */}}
{{- define "compoworld.adminTokenEnv" -}}
- name: COMPOWORLD_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "compoworld.adminSecretName" . }}
      key: {{ .Values.adminToken.key }}
{{- end -}}

{{/* readiness/liveness/startup probes on an HTTP path of the "http" port. Args: (list $root $path). */}}
{{- define "compoworld.probes" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
{{- $p := $root.Values.probes -}}
startupProbe:
  httpGet:
    path: {{ $path | quote }}
    port: http
  periodSeconds: {{ $p.startup.periodSeconds }}
  failureThreshold: {{ $p.startup.failureThreshold }}
readinessProbe:
  httpGet:
    path: {{ $path | quote }}
    port: http
  periodSeconds: {{ $p.readiness.periodSeconds }}
  timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
livenessProbe:
  httpGet:
    path: {{ $path | quote }}
    port: http
  periodSeconds: {{ $p.liveness.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
{{- end -}}

{{/* A number for an env value as the settings read it: a whole number without exponent
(values arrive as float64, and 33554432 would print 3.3554432e+07, which an int setting refuses). */}}
{{- define "compoworld.envNumber" -}}
{{- if and (kindIs "float64" .) (eq (float64 .) (float64 (int64 .))) -}}
{{- int64 . -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/* The limits of a service pod: workload.limits, where the payload and depth limits left empty
take the orchestrator's (one limit at every edge: a call the orchestrator lets through is not
refused by the service behind it). */}}
{{- define "compoworld.serviceLimitsEnv" -}}
{{- $own := .Values.workload.limits | default dict -}}
{{- $orch := .Values.orchestrator.limits | default dict -}}
{{- range $key := list "maxEpisodes" "maxPayloadBytes" "maxJsonDepth" }}
{{- $value := get $own $key -}}
{{- if and (eq (toString $value) "") (has $key (list "maxPayloadBytes" "maxJsonDepth")) -}}
{{- $value = get $orch $key -}}
{{- end -}}
{{- if ne (toString $value) "" }}
- name: {{ printf "COMPOWORLD_%s" (snakecase $key | upper) }}
  value: {{ include "compoworld.envNumber" $value | quote }}
{{- end }}
{{- end }}
{{- end -}}
