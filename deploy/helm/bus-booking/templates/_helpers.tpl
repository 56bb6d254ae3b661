{{/* Names, labels and the pod pieces the API, the workers and the migration job share. */}}

{{- define "bus-booking.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "bus-booking.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "bus-booking.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of one component (api, worker-<queue>, migrate); call with (dict "root" $ "component" "api"). */}}
{{- define "bus-booking.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bus-booking.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "bus-booking.labels" -}}
helm.sh/chart: {{ include "bus-booking.chart" .root }}
{{ include "bus-booking.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: bus-booking
{{- end }}

{{- define "bus-booking.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Where the referenced TLS Secrets are mounted inside the pods. */}}
{{- define "bus-booking.temporalCertificatesPath" -}}/var/run/secrets/bus-booking/temporal{{- end }}
{{- define "bus-booking.grpcCertificatesPath" -}}/var/run/secrets/bus-booking/grpc{{- end }}

{{/* Environment of every process that talks to PostgreSQL and Temporal (the API and the workers). */}}
{{- define "bus-booking.commonEnv" -}}
- name: NODE_ENV
  value: production
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "database.existingSecret is required: the Secret holding the PostgreSQL URL" .Values.database.existingSecret }}
      key: {{ .Values.database.urlKey }}
- name: DATABASE_POOL_SIZE
  value: {{ .Values.database.poolSize | quote }}
- name: ENCRYPTION_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ required "encryption.existingSecret is required: the Secret holding the encryption keys" .Values.encryption.existingSecret }}
      key: {{ .Values.encryption.keysKey }}
- name: ENCRYPTION_ACTIVE_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ .Values.encryption.existingSecret }}
      key: {{ .Values.encryption.activeKeyIdKey }}
- name: BLIND_INDEX_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.encryption.existingSecret }}
      key: {{ .Values.encryption.blindIndexKeyKey }}
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- with .Values.temporal.tls }}
{{- if .enabled }}
- name: TEMPORAL_TLS
  value: "true"
{{- if .existingSecret }}
{{- if .caKey }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: {{ printf "%s/%s" (include "bus-booking.temporalCertificatesPath" $) .caKey | quote }}
{{- end }}
{{- if and .certKey .keyKey }}
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: {{ printf "%s/%s" (include "bus-booking.temporalCertificatesPath" $) .certKey | quote }}
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: {{ printf "%s/%s" (include "bus-booking.temporalCertificatesPath" $) .keyKey | quote }}
{{- end }}
{{- end }}
{{- if .serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ .serverName | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
{{- if not .Values.temporal.tls.enabled }}
{{- fail "temporal.apiKey needs temporal.tls.enabled: the API key is sent over TLS only" }}
{{- end }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKey.existingSecret }}
      key: {{ .Values.temporal.apiKey.key }}
{{- end }}
- name: NOTIFICATIONS_TRANSPORT
  value: {{ .Values.notifications.transport | quote }}
- name: NOTIFICATIONS_OUTBOX_DIR
  value: /tmp/outbox
{{- end }}

{{/* Extra plain variables from a map; call with the map. */}}
{{- define "bus-booking.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{/* /tmp (the only writable path on a read-only root) and the Temporal client certificates. */}}
{{- define "bus-booking.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- end }}

{{- define "bus-booking.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  mountPath: {{ include "bus-booking.temporalCertificatesPath" . }}
  readOnly: true
{{- end }}
{{- end }}

{{- define "bus-booking.podSecurity" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
# The processes call nothing in the Kubernetes API.
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
