{{/* The release's base name: RELEASE-crashgame, or RELEASE when it already says crashgame. */}}
{{- define "crashgame.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select this release's game pods (Deployment, Services, PDB, NetworkPolicies). */}}
{{- define "crashgame.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: game
{{- end -}}

{{- define "crashgame.labels" -}}
{{ include "crashgame.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret the environment reads. */}}
{{- define "crashgame.secretName" -}}
{{- if .Values.secrets.create -}}
{{- include "crashgame.fullname" . -}}
{{- else -}}
{{- required "secrets.existingSecret: name the Secret holding CRASHGAME_DATABASE_URL, CRASHGAME_SEED_KEY and the operators' keys, or set secrets.create: true" .Values.secrets.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* An operator id as the game writes it in variable names: capitals, digits, other characters as _. */}}
{{- define "crashgame.envStem" -}}
{{- regexReplaceAll "[^A-Z0-9]" (upper .) "_" -}}
{{- end -}}

{{/* The operators of the installation file that have a wallet, and so a secret and an API key. */}}
{{- define "crashgame.signedOperators" -}}
{{- $ids := list -}}
{{- range .Values.installation.operators -}}
{{- if .wallet_url -}}{{- $ids = append $ids .operator -}}{{- end -}}
{{- end -}}
{{- toJson $ids -}}
{{- end -}}

{{/* The installation file: the values' installation, plus the keys the chart owns. */}}
{{- define "crashgame.installation" -}}
{{- $file := deepCopy .Values.installation -}}
{{- $_ := set $file "listen" (printf "0.0.0.0:%d" (int .Values.ports.http)) -}}
{{- $_ := set $file "metrics_listen" (printf "0.0.0.0:%d" (int .Values.ports.metrics)) -}}
{{- $_ := set $file "database" "${CRASHGAME_DATABASE_URL}" -}}
{{- $fairness := deepCopy (default dict .Values.installation.fairness) -}}
{{- $_ := set $fairness "seed_key" "${CRASHGAME_SEED_KEY}" -}}
{{- $_ := set $file "fairness" $fairness -}}
{{- $_ := set $file "cluster" (dict "replica" "${REPLICA}" "nats" (join "," .Values.nats.urls) "lease_ttl_ms" (int .Values.cluster.leaseTTLMs) "lease_renew_ms" (int .Values.cluster.leaseRenewMs) "drain_ms" (int .Values.cluster.drainMs)) -}}
{{- $operators := list -}}
{{- range .Values.installation.operators -}}
{{- $op := deepCopy . -}}
{{- if hasKey $op "secret" -}}{{- fail (printf "installation.operators: operator %s: leave secret out, the chart takes it from the Secret" $op.operator) -}}{{- end -}}
{{- if hasKey $op "api_key" -}}{{- fail (printf "installation.operators: operator %s: leave api_key out, the chart takes it from the Secret" $op.operator) -}}{{- end -}}
{{- if $op.wallet_url -}}
{{- $stem := include "crashgame.envStem" $op.operator -}}
{{- $_ := set $op "secret" (printf "${CRASHGAME_OPERATOR_%s_SECRET}" $stem) -}}
{{- $_ := set $op "api_key" (printf "${CRASHGAME_OPERATOR_%s_API_KEY}" $stem) -}}
{{- end -}}
{{- $operators = append $operators $op -}}
{{- end -}}
{{- $_ := set $file "operators" $operators -}}
{{- toYaml $file -}}
{{- end -}}
