package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultAgentID is the agent every gateway occ runs has.
const DefaultAgentID = "main"

// AgentFileNames are the names agents.files.get/set accept (2026.9.6).
// occ's own API allows only the first four (CONTRACT.md §6).
var AgentFileNames = []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"}

// sha256Hex is the form of a file hash and of an expectedHash.
var sha256Hex = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)

// HashContent returns the hash the gateway reports for a file: lowercase hex
// SHA-256 of its bytes.
func HashContent(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// HealthReport is the result of the health method.
type HealthReport struct {
	OK             bool          `json:"ok"`
	DefaultAgentID string        `json:"defaultAgentId"`
	Plugins        PluginsHealth `json:"plugins"`
	Agents         []struct {
		AgentID   string `json:"agentId"`
		IsDefault bool   `json:"isDefault"`
	} `json:"agents"`
	// Raw is the whole payload.
	Raw json.RawMessage `json:"-"`
}

// PluginsHealth is health.plugins.
type PluginsHealth struct {
	Loaded      []PluginRef `json:"loaded"`
	Errors      []PluginRef `json:"errors"`
	Unavailable []PluginRef `json:"unavailable"`
}

// PluginRef is one entry of a health.plugins list: loaded holds plugin IDs
// (strings), errors objects {id, origin, activated, error, failurePhase?},
// unavailable objects {id, state, diagnostic{kind, reason, detail}}. ID is
// the plugin ID; Message the error, or the diagnostic's detail and reason.
type PluginRef struct {
	ID      string
	Message string
}

// UnmarshalJSON accepts a string or an object.
func (p *PluginRef) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &p.ID)
	}
	var o struct {
		ID         string `json:"id"`
		PluginID   string `json:"pluginId"`
		Error      string `json:"error"`
		Message    string `json:"message"`
		Diagnostic struct {
			Reason string `json:"reason"`
			Detail string `json:"detail"`
		} `json:"diagnostic"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	p.ID = firstNonEmpty(o.ID, o.PluginID)
	p.Message = firstNonEmpty(o.Error, o.Message, strings.TrimSpace(o.Diagnostic.Reason+" "+o.Diagnostic.Detail))
	return nil
}

// Plugin warning codes of a ready deployment (drivers-testing.md §1.1).
const (
	WarningPluginInstallFailed = "PLUGIN_INSTALL_FAILED"
	WarningPluginAuthRequired  = "PLUGIN_AUTH_REQUIRED"
)

// PluginWarning is one warning of a ready deployment.
type PluginWarning struct {
	Code     string
	PluginID string
}

// PluginWarnings derives the deployment warnings from health.plugins: a
// plugin whose error or diagnostic speaks of authentication (auth, 401,
// credential, login) is PLUGIN_AUTH_REQUIRED; any other entry of errors or
// unavailable is PLUGIN_INSTALL_FAILED. One warning per plugin, sorted by
// plugin ID. (The notes do not say which runtime signal the reference maps
// to these codes; this is occ's reading of the health payload.)
func (h HealthReport) PluginWarnings() []PluginWarning {
	seen := map[string]string{}
	add := func(refs []PluginRef) {
		for _, r := range refs {
			if r.ID == "" {
				continue
			}
			code := WarningPluginInstallFailed
			m := strings.ToLower(r.Message)
			for _, w := range []string{"auth", "401", "credential", "login"} {
				if strings.Contains(m, w) {
					code = WarningPluginAuthRequired
				}
			}
			if prev, ok := seen[r.ID]; !ok || prev == WarningPluginInstallFailed {
				seen[r.ID] = code
			}
		}
	}
	add(h.Plugins.Errors)
	add(h.Plugins.Unavailable)
	out := make([]PluginWarning, 0, len(seen))
	for id, code := range seen {
		out = append(out, PluginWarning{Code: code, PluginID: id})
	}
	slices.SortFunc(out, func(a, b PluginWarning) int { return strings.Compare(a.PluginID, b.PluginID) })
	return out
}

// Health calls the health method (no scope needed). A gateway that does not
// list it in features.methods gives ErrRequest without a round trip.
func (c *Conn) Health(ctx context.Context) (HealthReport, error) {
	var h HealthReport
	if len(c.hello.Methods) > 0 && !c.hello.Offers("health") {
		return h, &Error{Kind: ErrRequest, Op: "health", Message: "the gateway does not offer the health method"}
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "health", nil, &raw); err != nil {
		return h, err
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, &Error{Kind: ErrProtocol, Op: "health", Err: err}
	}
	h.Raw = raw
	return h, nil
}

// AgentFile is one workspace file as agents.files.get/set report it.
type AgentFile struct {
	AgentID   string
	Workspace string
	Name      string
	Path      string
	// Missing is true when the file does not exist (get never creates it);
	// Content and Hash are then empty.
	Missing        bool
	ExpectedAbsent bool
	Size           int64
	UpdatedAt      time.Time
	// Hash is the lowercase hex SHA-256 of the file's bytes.
	Hash    string
	Content string
}

// agentFileResult is the payload of agents.files.get and agents.files.set.
type agentFileResult struct {
	OK        *bool  `json:"ok"`
	AgentID   string `json:"agentId"`
	Workspace string `json:"workspace"`
	File      *struct {
		Name           string  `json:"name"`
		Path           string  `json:"path"`
		Missing        bool    `json:"missing"`
		ExpectedAbsent bool    `json:"expectedAbsent"`
		Size           int64   `json:"size"`
		UpdatedAtMs    int64   `json:"updatedAtMs"`
		Hash           string  `json:"hash"`
		Content        *string `json:"content"`
	} `json:"file"`
}

// file checks the payload and converts it.
func (r agentFileResult) file(op, name string) (AgentFile, error) {
	if r.File == nil || r.File.Name != name {
		return AgentFile{}, &Error{Kind: ErrProtocol, Op: op, Err: fmt.Errorf("answer is not about file %q", name)}
	}
	f := AgentFile{
		AgentID: r.AgentID, Workspace: r.Workspace,
		Name: r.File.Name, Path: r.File.Path, Missing: r.File.Missing, ExpectedAbsent: r.File.ExpectedAbsent,
		Size: r.File.Size, Hash: strings.ToLower(r.File.Hash),
	}
	if r.File.UpdatedAtMs > 0 {
		f.UpdatedAt = time.UnixMilli(r.File.UpdatedAtMs)
	}
	if f.Missing {
		return f, nil
	}
	if r.File.Content == nil {
		return f, &Error{Kind: ErrProtocol, Op: op, Err: fmt.Errorf("file %q has no content", name)}
	}
	f.Content = *r.File.Content
	if f.Hash != "" && f.Hash != HashContent([]byte(f.Content)) {
		return f, &Error{Kind: ErrProtocol, Op: op, Err: fmt.Errorf("file %q: content does not match its hash", name)}
	}
	return f, nil
}

// checkFileName refuses a name the gateway would refuse, before any round trip.
func checkFileName(op, name string) error {
	if !slices.Contains(AgentFileNames, name) {
		return &Error{Kind: ErrRequest, Op: op, Code: "INVALID_REQUEST", Message: fmt.Sprintf("unsupported file %q", name)}
	}
	return nil
}

// GetAgentFile reads one workspace file (agents.files.get; operator.read).
// An empty agentID means DefaultAgentID. A missing file is not an error: the
// result has Missing set. The content is checked against the reported hash.
func (c *Conn) GetAgentFile(ctx context.Context, agentID, name string) (AgentFile, error) {
	const op = "agents.files.get"
	if agentID == "" {
		agentID = DefaultAgentID
	}
	if err := checkFileName(op, name); err != nil {
		return AgentFile{}, err
	}
	var r agentFileResult
	if err := c.Call(ctx, op, map[string]string{"agentId": agentID, "name": name}, &r); err != nil {
		return AgentFile{}, err
	}
	return r.file(op, name)
}

// AgentFileWrite is one agents.files.set request.
type AgentFileWrite struct {
	// AgentID defaults to DefaultAgentID.
	AgentID string
	Name    string
	// Content is written byte for byte; it must be valid UTF-8 (the frame is
	// JSON text and cannot carry other bytes).
	Content string
	// ExpectedHash, when set, is the Hash of the version this write replaces
	// (64 hex digits): the gateway refuses the write with ErrFileConflict if
	// the file changed meanwhile, and also if it is missing. Empty writes
	// unconditionally. 2026.9.6 has no "must still be absent" form, so the
	// creation of a missing file cannot be guarded.
	ExpectedHash string
}

// SetAgentFile writes one workspace file (agents.files.set; operator.admin).
// The answer must report exactly the bytes sent (its hash is checked), so a
// nil error means the gateway wrote Content. On ErrFileConflict the
// *Error's CurrentHash gives the file's present hash when the gateway sent it.
func (c *Conn) SetAgentFile(ctx context.Context, w AgentFileWrite) (AgentFile, error) {
	const op = "agents.files.set"
	if w.AgentID == "" {
		w.AgentID = DefaultAgentID
	}
	if err := checkFileName(op, w.Name); err != nil {
		return AgentFile{}, err
	}
	if !utf8.ValidString(w.Content) {
		return AgentFile{}, &Error{Kind: ErrRequest, Op: op, Message: "content is not valid UTF-8"}
	}
	params := map[string]string{"agentId": w.AgentID, "name": w.Name, "content": w.Content}
	if w.ExpectedHash != "" {
		if !sha256Hex.MatchString(w.ExpectedHash) {
			return AgentFile{}, &Error{Kind: ErrRequest, Op: op, Message: "expectedHash must be 64 hex digits"}
		}
		params["expectedHash"] = strings.ToLower(w.ExpectedHash)
	}
	var r agentFileResult
	if err := c.Call(ctx, op, params, &r); err != nil {
		return AgentFile{}, err
	}
	if r.OK != nil && !*r.OK {
		return AgentFile{}, &Error{Kind: ErrProtocol, Op: op, Err: errors.New("answer has ok:false")}
	}
	f, err := r.file(op, w.Name)
	if err != nil {
		return f, err
	}
	if want := HashContent([]byte(w.Content)); f.Missing || (f.Hash != "" && f.Hash != want) || (f.Hash == "" && f.Content != w.Content) {
		return f, &Error{Kind: ErrProtocol, Op: op, Err: fmt.Errorf("file %q: the gateway reports content other than what was written", w.Name)}
	}
	return f, nil
}

// ConfigSnapshot is the result of config.get.
type ConfigSnapshot struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Raw is the file's text as the gateway read it (secrets redacted).
	Raw string `json:"raw"`
	// Hash is the gateway's opaque authored revision of the file.
	Hash string `json:"hash"`
	// Payload is the whole answer.
	Payload json.RawMessage `json:"-"`
}

// ConfigGet reads the gateway's view of its configuration file (config.get;
// operator.read).
func (c *Conn) ConfigGet(ctx context.Context) (ConfigSnapshot, error) {
	var raw json.RawMessage
	var s ConfigSnapshot
	if err := c.Call(ctx, "config.get", nil, &raw); err != nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, &Error{Kind: ErrProtocol, Op: "config.get", Err: err}
	}
	s.Payload = raw
	return s, nil
}

// Model probe statuses (models.probe; docs/cli/models.md).
const (
	ModelProbeOK   = "ok"
	ModelProbeAuth = "auth"
)

// ModelProbe is the result of models.probe.
type ModelProbe struct {
	Provider string `json:"provider"`
	// Status is one of ok, auth, rate_limit, billing, timeout, format,
	// unknown, no_model.
	Status    string `json:"status"`
	Error     string `json:"error"`
	LatencyMs int64  `json:"latencyMs"`
	Results   []struct {
		ProfileID string `json:"profileId"`
		Label     string `json:"label"`
		Status    string `json:"status"`
		Error     string `json:"error"`
	} `json:"results"`
}

// ProbeModel asks the gateway to try the configured credential of a model
// provider (models.probe; operator.admin): the gateway calls the provider.
// When the provider rejected the credential (status "auth") the result is
// returned together with an ErrModelAuth error; every other status comes
// back with a nil error for the caller to judge.
func (c *Conn) ProbeModel(ctx context.Context, provider string) (ModelProbe, error) {
	const op = "models.probe"
	var p ModelProbe
	if provider == "" {
		return p, &Error{Kind: ErrRequest, Op: op, Message: "no provider"}
	}
	if err := c.Call(ctx, op, map[string]string{"provider": provider}, &p); err != nil {
		return p, err
	}
	if p.Status == ModelProbeAuth {
		return p, &Error{Kind: ErrModelAuth, Op: op, Code: p.Status, Message: p.Error}
	}
	return p, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
