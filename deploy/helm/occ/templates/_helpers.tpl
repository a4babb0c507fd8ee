{{/* The release's full name, used for every object. */}}
{{- define "occ.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels that select this release's Pods. */}}
{{- define "occ.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "occ.labels" -}}
{{ include "occ.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "occ.serviceAccountName" -}}
{{- default (include "occ.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The occ image, by digest when one is given. */}}
{{- define "occ.image" -}}
{{- $repo := required "image.repository is required: push occ's image with `occ runtime image build --occ --push REF`" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (required "image.digest (preferred) or image.tag is required" .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The restricted security context of every container. */}}
{{- define "occ.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
The Pod-level settings both roles share, and an init container that
imports the keyset Secret into the data directory (occ refuses a keyset
file that anyone but its owner may read, which a Secret volume is once
fsGroup applies, and a Secret volume's files belong to root without it).
*/}}
{{- define "occ.podCommon" -}}
serviceAccountName: {{ include "occ.serviceAccountName" . }}
automountServiceAccountToken: true
enableServiceLinks: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  # The keyset Secret's file: group 65532, mode 0440, readable by the
  # init container that imports it.
  fsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
initContainers:
  - name: import-keyset
    image: {{ include "occ.image" . }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    args: ["secrets", "import-keyset", "--config", "/etc/occ/occ.yaml", "--from", "/etc/occ-keyset/secrets.keyset"]
    securityContext:
      {{- include "occ.containerSecurityContext" . | nindent 6 }}
    resources:
      requests: {cpu: 10m, memory: 32Mi}
      limits: {cpu: 200m, memory: 128Mi}
    volumeMounts:
      - {name: config, mountPath: /etc/occ, readOnly: true}
      - {name: keyset, mountPath: /etc/occ-keyset, readOnly: true}
      - {name: data, mountPath: /var/lib/occ}
{{- include "occ.scheduling" . }}
volumes:
  {{- include "occ.volumes" . | nindent 2 }}
{{- end -}}

{{/* The occ container's image, environment, security context and mounts. */}}
{{- define "occ.containerCommon" -}}
image: {{ include "occ.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
env:
  - name: OCC_DATABASE_URL
    valueFrom:
      secretKeyRef:
        name: {{ required "database.existingSecret is required: a Secret holding the PostgreSQL URL" .Values.database.existingSecret }}
        key: {{ .Values.database.key }}
{{- if and .Values.bootstrap.apiKeyKey (not .Values.bootstrap.existingSecret) }}
{{- fail "bootstrap.apiKeyKey needs bootstrap.existingSecret: the Secret whose key it names" }}
{{- end }}
{{- with .Values.bootstrap.existingSecret }}
  - name: OCC_BOOTSTRAP_ADMIN_PASSWORD
    valueFrom:
      secretKeyRef:
        name: {{ . }}
        key: {{ $.Values.bootstrap.adminPasswordKey }}
{{- with $.Values.bootstrap.apiKeyKey }}
  - name: OCC_BOOTSTRAP_API_KEY
    valueFrom:
      secretKeyRef:
        name: {{ $.Values.bootstrap.existingSecret }}
        key: {{ . }}
{{- end }}
{{- end }}
securityContext:
  {{- include "occ.containerSecurityContext" . | nindent 2 }}
volumeMounts:
  - {name: config, mountPath: /etc/occ, readOnly: true}
  - {name: data, mountPath: /var/lib/occ}
  - {name: tmp, mountPath: /tmp}
{{- end -}}

{{/* The volumes both roles share. */}}
{{- define "occ.volumes" -}}
- name: config
  configMap:
    name: {{ include "occ.fullname" . }}
- name: keyset
  secret:
    secretName: {{ required "secretsKeyset.existingSecret is required: a Secret holding occ's secrets keyset" .Values.secretsKeyset.existingSecret }}
    defaultMode: 0440
    items:
      - key: {{ .Values.secretsKeyset.key }}
        path: secrets.keyset
- name: data
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end -}}

{{/* Scheduling settings of every Pod. */}}
{{- define "occ.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
