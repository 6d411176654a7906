{{/* The release's resource name. */}}
{{- define "vmcp.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels every resource carries. */}}
{{- define "vmcp.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels the Service and the Deployment select pods by. */}}
{{- define "vmcp.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The service account's name. */}}
{{- define "vmcp.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vmcp.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* vmcp.yaml: the values' config with the listener set by the chart. */}}
{{- define "vmcp.config" -}}
{{- $server := merge (dict "transport" "http" "listen" (printf "0.0.0.0:%v" .Values.port)) (default (dict) .Values.config.server) -}}
{{- $_ := set $server "transport" "http" -}}
{{- $_ := set $server "listen" (printf "0.0.0.0:%v" .Values.port) -}}
{{- toYaml (merge (dict "server" $server) (omit .Values.config "server")) -}}
{{- end -}}
