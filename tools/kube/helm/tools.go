//go:build tools

// Package tools pins helm for scripts/kube-assets.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
