package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The codex plugin side of the fake gateway (the dedicated Codex lane):
//
//	fakegateway plugins install SPEC --pin
//
// records SPEC as installed in OPENCLAW_STATE_DIR/plugins/<id>.json (id:
// the package name after the scope, "codex" for @openclaw/codex). A
// gateway whose document sets plugins.entries.codex.config.appServer with
// transport "websocket" refuses to start (exit 1) unless the plugin was
// installed that way, its authToken is a ${VAR} reference that its
// environment resolves, and the app-server at url accepts a WebSocket
// upgrade with that token; the real gateway's codex plugin needs the same.

// pluginsInstall is `fakegateway plugins install SPEC [--pin]`.
func pluginsInstall(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "usage: fakegateway plugins install SPEC [--pin]")
		return exitUsage
	}
	spec := args[0]
	state := getenv("OPENCLAW_STATE_DIR")
	if state == "" {
		fmt.Fprintln(stderr, "fakegateway plugins install: OPENCLAW_STATE_DIR is not set")
		return exitUsage
	}
	name := strings.TrimPrefix(spec, "@")
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	id := name[strings.LastIndex(name, "/")+1:]
	if err := os.MkdirAll(filepath.Join(state, "plugins"), 0o700); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	b, _ := json.Marshal(map[string]string{"source": "npm", "spec": spec})
	if err := os.WriteFile(filepath.Join(state, "plugins", id+".json"), b, 0o600); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "Installed plugin: %s\n", id)
	return exitOK
}

// checkCodex applies the codex plugin's settings of the document at
// configPath; nil when the document has none or they work.
func checkCodex(configPath, stateDir string, getenv func(string) string) error {
	b, err := os.ReadFile(configPath)
	if err != nil {
		return nil
	}
	var doc struct {
		Plugins struct {
			Entries map[string]struct {
				Config struct {
					AppServer struct {
						Transport string `json:"transport"`
						URL       string `json:"url"`
						AuthToken string `json:"authToken"`
					} `json:"appServer"`
				} `json:"config"`
			} `json:"entries"`
		} `json:"plugins"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	as := doc.Plugins.Entries["codex"].Config.AppServer
	if as.Transport != "websocket" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(stateDir, "plugins", "codex.json")); err != nil {
		return fmt.Errorf("plugin codex is configured but not installed")
	}
	name, ok := strings.CutPrefix(as.AuthToken, "${")
	name, ok2 := strings.CutSuffix(name, "}")
	if !ok || !ok2 || getenv(name) == "" {
		return fmt.Errorf("plugins.entries.codex.config.appServer.authToken: missing env var %q", name)
	}
	host, ok := strings.CutPrefix(as.URL, "ws://")
	if !ok {
		return fmt.Errorf("codex app-server url %q is not ws://", as.URL)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	req.Header.Set("Authorization", "Bearer "+getenv(name))
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("codex app-server unreachable: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("codex app-server refused the connection: %s", resp.Status)
	}
	return nil
}
