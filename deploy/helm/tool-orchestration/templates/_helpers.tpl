{{- define "tos.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tos.fullname" -}}
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

{{- define "tos.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tos.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "tos.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tos.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "tos.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tos.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tos.secretName" -}}
{{- default (include "tos.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "tos.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/* Pod-level security: a numeric non-root user (the image's 1000), the runtime's seccomp profile. */}}
{{- define "tos.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "tos.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
{{- end }}

{{/*
The pod of one role (api or worker): the same image and settings, `--role` and its own resources,
probes on HEALTH_PORT, and writable /tmp and /data on emptyDirs under a read-only root.
Call with (dict "root" $ "role" "api").
*/}}
{{- define "tos.podTemplate" -}}
{{- $root := .root }}
{{- $role := .role }}
{{- $values := index $root.Values $role }}
metadata:
  labels:
    {{- include "tos.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $role }}
    {{- with $root.Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- if not $root.Values.secrets.existingSecret }}
    checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
    {{- end }}
    {{- with $root.Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "tos.serviceAccountName" $root }}
  automountServiceAccountToken: {{ $root.Values.serviceAccount.automountToken }}
  terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
  securityContext:
    {{- include "tos.podSecurityContext" $root | nindent 4 }}
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ $role }}
      image: {{ include "tos.image" $root | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args: ["node", "dist/src/main.js", "--role", {{ $role | quote }}]
      envFrom:
        - configMapRef:
            name: {{ include "tos.fullname" $root }}
        - secretRef:
            name: {{ include "tos.secretName" $root }}
      {{- with $values.env }}
      env:
        {{- range $name, $value := . }}
        - name: {{ $name }}
          value: {{ $value | toString | quote }}
        {{- end }}
      {{- end }}
      ports:
        {{- if eq $role "api" }}
        - name: http
          containerPort: {{ $root.Values.ports.http }}
          protocol: TCP
        {{- end }}
        - name: health
          containerPort: {{ $root.Values.ports.health }}
          protocol: TCP
      startupProbe:
        httpGet: { path: /healthz, port: health }
        periodSeconds: 5
        failureThreshold: {{ $root.Values.probes.startupFailureThreshold }}
      livenessProbe:
        httpGet: { path: /healthz, port: health }
        {{- toYaml $root.Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet: { path: /readyz, port: health }
        {{- toYaml $root.Values.probes.readiness | nindent 8 }}
      resources:
        {{- toYaml $values.resources | nindent 8 }}
      securityContext:
        {{- include "tos.containerSecurityContext" $root | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        - name: data
          mountPath: /data
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: {{ $root.Values.scratch.tmpSizeLimit }}
    - name: data
      emptyDir:
        sizeLimit: {{ $root.Values.scratch.dataSizeLimit }}
  {{- with $root.Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
