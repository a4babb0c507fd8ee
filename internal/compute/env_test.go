package compute

import (
	"slices"
	"testing"
)

func TestSecretEnvNames(t *testing.T) {
	env := map[string]string{"B_KEY": "1", "A_KEY": "2", "HOME": "/x", "PATH": "/y", "OPENCLAW_GATEWAY_TOKEN": "t", "1BAD": "3",
		"BAD-NAME": "4", "": "5", "_OK9": "6"}
	if got, want := SecretEnvNames(env), []string{"A_KEY", "B_KEY", "_OK9"}; !slices.Equal(got, want) {
		t.Errorf("SecretEnvNames = %v, want %v", got, want)
	}
	if !WantsChannels(map[string]any{"channels": map[string]any{"slack": map[string]any{}}}) || WantsChannels(map[string]any{"channels": map[string]any{}}) || WantsChannels(nil) {
		t.Error("WantsChannels")
	}
}
