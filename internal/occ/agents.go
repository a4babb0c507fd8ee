package occ

import "time"

// Agent statuses and desired runtime states.
const (
	AgentActive   = "active"
	AgentDeleting = "deleting"

	DesiredRunning = "running"
	DesiredStopped = "stopped"
)

// WorkspaceFileNames are the four files of an Agent's workspace occ manages.
var WorkspaceFileNames = []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"}

// MaxWorkspaceFileBytes bounds one workspace file's UTF-8 content.
const MaxWorkspaceFileBytes = 16 * 1024

// AgentSettings are an Agent's launch settings.
type AgentSettings struct {
	ExecutionMode string
	BackendID     string
	HarnessAuth   *HarnessAuth
	Plugins       map[string]PluginSelection
}

// Agent is a named AI workload of a Namespace with its own service
// principal. Fields whose saved form cannot be decoded are listed in
// Unreadable and reported through ReadError; they are never defaulted.
type Agent struct {
	ID                 string
	NamespaceID        string
	Name               string
	Status             string
	DesiredState       string
	ConfigurationID    string
	ServicePrincipalID string
	ActiveRevisionID   string
	Settings           AgentSettings
	Unreadable         map[string]bool
	ReadError          *ReadError
	Version            int64
	CreatedBy          string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Ref is the Agent as a resource.
func (a Agent) Ref() ResourceRef {
	return ResourceRef{Kind: KindAgent, ID: a.ID, NamespaceID: a.NamespaceID}
}

// ConfigurationSnapshot is the Configuration a revision froze: the
// document itself, not just its ID.
type ConfigurationSnapshot struct {
	ID         string         `json:"id"`
	Kind       string         `json:"kind"`
	Generation int64          `json:"generation"`
	Document   map[string]any `json:"document"`
}

// RevisionSnapshot is everything a deployment admitted, frozen.
type RevisionSnapshot struct {
	Configuration      ConfigurationSnapshot      `json:"configuration"`
	ExecutionMode      string                     `json:"executionMode"`
	BackendID          string                     `json:"backendId,omitempty"`
	HarnessAuth        *HarnessAuth               `json:"harnessAuth,omitempty"`
	Plugins            map[string]PluginSelection `json:"plugins"`
	ComputeDriver      string                     `json:"computeDriver"`
	ServicePrincipalID string                     `json:"servicePrincipalId"`
	SecretBindings     map[string]SecretBinding   `json:"secretBindings,omitempty"`
}

// Revision is an immutable AgentRevision; its ID is the deployment ID.
type Revision struct {
	ID          string
	AgentID     string
	NamespaceID string
	Number      int64
	// Snapshot holds the readable saved settings; nil when the snapshot
	// is unreadable as a whole. Complete says whether it holds all of
	// them: only a complete snapshot is ever deployed.
	Snapshot   *RevisionSnapshot
	Unreadable map[string]bool // the fields of Snapshot that could not be read
	ReadError  *ReadError      // the first of them
	CreatedBy  string
	CreatedAt  time.Time
}

// Complete reports whether every saved setting of the revision was read.
func (r Revision) Complete() bool { return r.Snapshot != nil && r.ReadError == nil }

// Ref is the revision as a resource.
func (r Revision) Ref() ResourceRef {
	return ResourceRef{Kind: KindAgentRevision, ID: r.ID, NamespaceID: r.NamespaceID}
}
