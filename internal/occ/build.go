package occ

import (
	"runtime/debug"
	"strings"
)

// BuildVersion is this binary's version as the Go toolchain recorded it:
// the module version (a tag, when installed with `go install …@vX`, else
// "(devel)") and the commit it was built from, with "+dirty" when the
// work tree had changes, for example "(devel) 3f2a9c1d07b4+dirty".
func BuildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return describeBuild(info)
}

func describeBuild(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var commit string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit == "" || strings.Contains(version, commit[:min(12, len(commit))]) {
		return version
	}
	commit = commit[:min(12, len(commit))]
	if dirty {
		commit += "+dirty"
	}
	return version + " " + commit
}
