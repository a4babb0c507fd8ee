package computetest

import (
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// workspaceSetupObligations bind a driver that declares WorkspaceSetup:
// initial files land in the workspace before the first start and are
// never applied again (a later revision, a stop, a reopened driver).
var workspaceSetupObligations = []obligation{
	{"InitialFilesAppliedOnce", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		spec := s.spec(ag, 1)
		spec.InitialFiles = map[string]string{"USER.md": "initial\n", "SOUL.md": "soul\n"}
		s.ready(t, spec)
		s.wantFile(t, ag, "USER.md", "initial\n")
		s.wantFile(t, ag, "SOUL.md", "soul\n")
		s.obs.WriteWorkspaceFile(t, ag, "USER.md", "edited\n")

		// A second revision, then a stop and a reopened driver: the
		// files are never written again.
		spec2 := s.spec(ag, 2)
		spec2.InitialFiles = map[string]string{"USER.md": "initial again\n"}
		s.ready(t, spec2)
		s.notReapplied(t, ag)
		stop(t, s.d, ag)
		spec3 := s.spec(ag, 3)
		spec3.InitialFiles = spec2.InitialFiles
		s.readyOn(t, s.h.Reopen(t), spec3)
		s.notReapplied(t, ag)
	}},
}

// notReapplied fails if the second revision's initial file was written;
// with PersistentState the user's edit and the first files are kept.
func (s *subject) notReapplied(t *testing.T, ag compute.AgentRef) {
	t.Helper()
	if got, _ := s.obs.WorkspaceFile(t, ag, "USER.md"); got == "initial again\n" {
		t.Fatal("initial files were applied again")
	}
	if s.caps.PersistentState {
		s.wantFile(t, ag, "USER.md", "edited\n")
		s.wantFile(t, ag, "SOUL.md", "soul\n")
	}
}

// persistentStateObligations bind a driver that declares PersistentState:
// the workspace survives a stop, a new revision and a reopened driver.
var persistentStateObligations = []obligation{
	{"WorkspaceSurvivesStopRevisionAndReopen", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		s.ready(t, s.spec(ag, 1))
		s.obs.WriteWorkspaceFile(t, ag, "NOTES.md", "kept\n")
		stop(t, s.d, ag)
		if !s.obs.AgentExists(t, ag) {
			t.Fatal("StopAgent removed the Agent's data")
		}
		s.wantFile(t, ag, "NOTES.md", "kept\n")
		s.ready(t, s.spec(ag, 2))
		s.wantFile(t, ag, "NOTES.md", "kept\n")
		s.readyOn(t, s.h.Reopen(t), s.spec(ag, 3))
		s.wantFile(t, ag, "NOTES.md", "kept\n")
	}},
}

// wantFile fails unless the Agent's workspace file has this content.
func (s *subject) wantFile(t *testing.T, ag compute.AgentRef, name, want string) {
	t.Helper()
	if got, ok := s.obs.WorkspaceFile(t, ag, name); !ok || got != want {
		t.Fatalf("workspace file %s = %q (exists %v); want %q", name, got, ok, want)
	}
}
