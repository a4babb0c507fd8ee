package ociimage

import (
	"fmt"
	"os"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// The occ image's user and directories.
const (
	// OCCUID is the uid and gid occ runs as in its image (user "occ").
	OCCUID = 65532
	// OCCBinary is where the image keeps occ.
	OCCBinary = "/usr/local/bin/occ"
	// OCCDataDir is the image's data directory (OCC_DATA_DIR), writable
	// by OCCUID; with a read-only root filesystem mount a volume there.
	OCCDataDir = "/var/lib/occ"
)

// OCCImageName is the occ image's default name for a version, the version
// made a valid tag ("(devel)" becomes "occ:devel").
func OCCImageName(version string) string {
	tag := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, version)
	tag = strings.TrimLeft(strings.TrimRight(tag, "-"), "-.")
	if len(tag) > 128 {
		tag = tag[:128]
	}
	if tag == "" {
		tag = "dev"
	}
	return "occ:" + tag
}

// OCC is the image of occ itself that the Helm chart runs: the statically
// linked occ binary at OCCBinary (its entry point; `serve` by default), run
// as the non-root user 65532:65532, with /etc/passwd and /etc/group, the
// CA certificates of this machine (caFile), a world-writable /tmp and the
// data directory OCCDataDir. A dynamically linked binary is refused: the
// base is empty, so it could not start (build one with CGO_ENABLED=0).
func OCC(binary, version, caFile string) (Spec, error) {
	isELF, arch, dynamic, err := elfInfo(binary)
	switch {
	case err != nil:
		return Spec{}, fmt.Errorf("occ binary: %w", err)
	case !isELF:
		return Spec{}, fmt.Errorf("occ binary %s is not a Linux (ELF) executable", binary)
	case arch == "":
		return Spec{}, fmt.Errorf("occ binary %s is for a machine other than amd64 or arm64", binary)
	case dynamic:
		return Spec{}, fmt.Errorf("occ binary %s is dynamically linked and cannot run on the image's empty base; build a static one with CGO_ENABLED=0 go build -o occ ./cmd/occ and name it with --occ-binary", binary)
	}
	sys, err := systemFiles(user{name: "occ", id: OCCUID, home: OCCDataDir}, caFile)
	if err != nil {
		return Spec{}, err
	}
	uid := fmt.Sprint(OCCUID)
	layer := append(sys,
		Copy(OCCBinary, 0o755, binary),
		Entry{Path: OCCDataDir, Mode: 0o755 | os.ModeDir, UID: OCCUID, GID: OCCUID})
	return Spec{
		Name:         OCCImageName(version),
		Architecture: arch,
		Layers:       [][]Entry{layer},
		Entrypoint:   []string{OCCBinary},
		Cmd:          []string{"serve"},
		Env:          []string{"PATH=" + ImagePath, "OCC_DATA_DIR=" + OCCDataDir},
		User:         uid + ":" + uid,
		WorkingDir:   OCCDataDir,
		Labels: map[string]string{
			LabelTitle:       "occ",
			LabelDescription: "occ, the OpenClaw Enterprise control plane",
			LabelVersion:     version,
			LabelOpenClaw:    occ.PinnedOpenClawVersion,
		},
	}, nil
}
