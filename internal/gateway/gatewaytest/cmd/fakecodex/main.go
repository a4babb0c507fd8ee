// Command fakecodex is the fake Codex CLI of the dedicated Codex lane: it
// takes the real command lines the local driver runs and keeps the state
// the real one keeps (the login, in $CODEX_HOME/auth.json):
//
//	fakecodex --version
//	fakecodex [-c k=v]… login --with-api-key|--with-access-token   (secret on stdin)
//	fakecodex [-c k=v]… exec [flags] PROMPT                        (the model probe)
//	fakecodex [-c k=v]… app-server --listen ws://127.0.0.1:PORT \
//	    --ws-auth capability-token --ws-token-sha256 HEX
//
// The fake provider behind it decides by the credential, as a real one
// would: a secret containing "rejected" gets 401, "forbidden" 403,
// "broken" 500, and "slow" no answer; any other is accepted. An access
// token containing "revoked" is refused at login already (401), as the
// real login asks the provider about the token. A credential starting
// "cgw-" is a Credential Gateway's placeholder (credgatewaytest): exec then
// really sends the probe, POST <openai_base_url>/responses with it as the
// bearer, and the status answered decides, printed as Codex prints it.
// exec records
// its overrides and flags in $CODEX_HOME/exec.args. The app-server answers
// GET /readyz, and a WebSocket upgrade on / with 101 only for
// "Authorization: Bearer <token>" whose SHA-256 is the one given (401
// otherwise); every upgrade attempt is appended to $CODEX_HOME/connections
// ("ok" or "rejected").
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

type auth struct {
	Mode   string `json:"mode"`
	Secret string `json:"secret"`
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	var overrides []string
	for len(args) >= 2 && args[0] == "-c" {
		overrides = append(overrides, args[1])
		args = args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: fakecodex [-c k=v]… login|exec|app-server …")
		return 2
	}
	home := os.Getenv("CODEX_HOME")
	switch args[0] {
	case "--version":
		fmt.Println("codex-cli " + occ.PinnedCodexVersion)
		return 0
	case "login":
		return login(home, args[1:])
	case "exec":
		return execProbe(home, overrides, args[1:])
	case "app-server":
		return appServer(home, args[1:])
	}
	fmt.Fprintf(os.Stderr, "fakecodex: unknown command %q\n", args[0])
	return 2
}

func login(home string, args []string) int {
	mode := ""
	for _, a := range args {
		switch a {
		case "--with-api-key":
			mode = "api_key"
		case "--with-access-token":
			mode = "access_token"
		}
	}
	if mode == "" || home == "" {
		fmt.Fprintln(os.Stderr, "fakecodex login: --with-api-key or --with-access-token, and CODEX_HOME, needed")
		return 2
	}
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	secret := strings.TrimSpace(line)
	if secret == "" {
		fmt.Fprintln(os.Stderr, "Error: no credential on stdin")
		return 1
	}
	// The real access-token login asks the provider about the token.
	if mode == "access_token" && strings.Contains(secret, "revoked") {
		fmt.Fprintln(os.Stderr, "Error logging in with access token: failed to request personal access token metadata: unexpected status 401 Unauthorized")
		return 1
	}
	b, _ := json.Marshal(auth{Mode: mode, Secret: secret})
	if err := os.WriteFile(filepath.Join(home, "auth.json"), b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("Successfully logged in")
	return 0
}

func readAuth(home string) (auth, bool) {
	var a auth
	b, err := os.ReadFile(filepath.Join(home, "auth.json"))
	if err != nil || json.Unmarshal(b, &a) != nil {
		return a, false
	}
	return a, true
}

func execProbe(home string, overrides, args []string) int {
	a, ok := readAuth(home)
	if !ok {
		fmt.Fprintln(os.Stderr, "Error: Not logged in")
		return 1
	}
	_ = os.WriteFile(filepath.Join(home, "exec.args"), []byte(strings.Join(append(overrides, args...), "\n")+"\n"), 0o600)
	if strings.HasPrefix(a.Secret, "cgw-") {
		return relayedProbe(a.Secret, overrides)
	}
	switch {
	case strings.Contains(a.Secret, "slow"):
		time.Sleep(time.Hour)
	case strings.Contains(a.Secret, "rejected"):
		fmt.Println("ERROR: unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1/v1/responses")
		return 1
	case strings.Contains(a.Secret, "forbidden"):
		fmt.Println("ERROR: unexpected status 403 Forbidden: forbidden, url: http://127.0.0.1/v1/responses")
		return 1
	case strings.Contains(a.Secret, "broken"):
		fmt.Println("ERROR: unexpected status 500 Internal Server Error: boom, url: http://127.0.0.1/v1/responses")
		return 1
	}
	fmt.Println("OK")
	return 0
}

// relayedProbe sends the probe through the base URL the overrides name.
func relayedProbe(placeholder string, overrides []string) int {
	base := ""
	for _, o := range overrides {
		if v, ok := strings.CutPrefix(o, "openai_base_url="); ok {
			base, _ = strconv.Unquote(v)
		}
	}
	if base == "" {
		fmt.Println("ERROR: a placeholder credential without openai_base_url")
		return 1
	}
	url := strings.TrimRight(base, "/") + "/responses"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"input":"probe"}`))
	req.Header.Set("Authorization", "Bearer "+placeholder)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Printf("ERROR: stream error: error sending request for url (%s)\n", url)
		return 1
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fmt.Printf("ERROR: unexpected status %d %s: relayed, url: %s\n", res.StatusCode, http.StatusText(res.StatusCode), url)
		return 1
	}
	fmt.Println("OK")
	return 0
}

func appServer(home string, args []string) int {
	var listen, want string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--listen":
			listen = args[i+1]
		case "--ws-token-sha256":
			want = args[i+1]
		}
	}
	hostport, ok := strings.CutPrefix(listen, "ws://")
	if !ok || want == "" {
		fmt.Fprintln(os.Stderr, "fakecodex app-server: --listen ws://HOST:PORT and --ws-token-sha256 needed")
		return 2
	}
	if _, ok := readAuth(home); !ok {
		fmt.Fprintln(os.Stderr, "Error: Not logged in")
		return 1
	}
	var mu sync.Mutex
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(filepath.Join(home, "connections"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err == nil {
			fmt.Fprintln(f, s)
			f.Close()
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(tok))
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || hex.EncodeToString(sum[:]) != want {
			record("rejected")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		record("ok")
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
	})
	l, err := net.Listen("tcp", hostport)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("codex app-server (WebSockets)\n  listening on: %s\n", listen)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
