package compute

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// Permanent codes of a reference or spec no driver can act on; every
// driver answers them the same way (computetest checks it).
const (
	InvalidNamespaceID = "INVALID_NAMESPACE_ID"
	InvalidAgentID     = "INVALID_AGENT_ID"
	InvalidRevisionID  = "INVALID_REVISION_ID"
	InvalidInitialFile = "INVALID_INITIAL_FILE"
)

// Validate returns a permanent InvalidNamespaceID error unless the ID is a
// Namespace ID.
func (ns NamespaceRef) Validate() error {
	return validID(occ.PrefixNamespace, ns.ID, InvalidNamespaceID)
}

// Validate returns a permanent error unless both IDs are well formed.
func (a AgentRef) Validate() error {
	if err := validID(occ.PrefixNamespace, a.NamespaceID, InvalidNamespaceID); err != nil {
		return err
	}
	return validID(occ.PrefixAgent, a.AgentID, InvalidAgentID)
}

// Validate returns a permanent error unless the Agent reference and the
// revision ID are well formed.
func (r RevisionRef) Validate() error {
	if err := r.AgentRef.Validate(); err != nil {
		return err
	}
	return validID(occ.PrefixRevision, r.RevisionID, InvalidRevisionID)
}

// ValidateInitialFiles accepts plain file names only (initial files land
// in the workspace directory, never elsewhere); anything else is a
// permanent InvalidInitialFile error.
func ValidateInitialFiles(files map[string]string) error {
	for name := range files {
		if name == "" || name == "." || name == ".." || filepath.Base(name) != name || strings.ContainsAny(name, "/\\\x00") {
			return Permanent(InvalidInitialFile, fmt.Errorf("initial file name %q is not a plain file name", name))
		}
	}
	return nil
}

func validID(prefix occ.Prefix, id, code string) error {
	if !occ.ValidID(prefix, id) {
		return Permanent(code, fmt.Errorf("bad id %q", id))
	}
	return nil
}
