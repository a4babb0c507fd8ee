package ociimage

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// CACertificates is where Debian (package ca-certificates) keeps the
// system's trusted roots as one file; the images carry a copy at the same
// path.
const CACertificates = "/etc/ssl/certs/ca-certificates.crt"

// user is an account of the image's /etc/passwd and /etc/group.
type user struct {
	name string
	id   int
	home string
}

// systemFiles are the files every image has: root and the image's user in
// /etc/passwd and /etc/group (so that the runtime and the programs in the
// image can name the uid they run as), /etc/nsswitch.conf (glibc's name
// lookups: files, then DNS), the CA certificates of this machine (from
// caFile) and a world-writable /tmp.
func systemFiles(u user, caFile string) ([]Entry, error) {
	if _, err := os.Stat(caFile); err != nil {
		return nil, fmt.Errorf("CA certificates: %w (Debian package ca-certificates)", err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", u.name, u.id, u.id, u.name, u.home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", u.name, u.id)
	return []Entry{
		File("/etc/passwd", 0o644, []byte(passwd)),
		File("/etc/group", 0o644, []byte(group)),
		File("/etc/nsswitch.conf", 0o644, []byte("passwd: files\ngroup: files\nhosts: files dns\n")),
		Copy(CACertificates, 0o644, caFile),
		{Path: "/tmp", Mode: 0o777 | os.ModeDir | os.ModeSticky},
	}, nil
}

// elfMachines maps the ELF machines occ builds images for to GOARCH.
var elfMachines = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}

// elfInfo reports whether path is an ELF file, its GOARCH ("" for another
// machine) and whether it is dynamically linked (an interpreter or needed
// libraries).
func elfInfo(path string) (isELF bool, arch string, dynamic bool, err error) {
	r, err := os.Open(path)
	if err != nil {
		return false, "", false, err
	}
	defer r.Close()
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != elf.ELFMAG {
		return false, "", false, nil
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return false, "", false, fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			dynamic = true
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		dynamic = true
	}
	return true, elfMachines[f.Machine], dynamic, nil
}

// SharedLibraries returns the shared libraries of this machine that the
// dynamically linked ELF files of arch among files load, as ldd resolves
// them (the dynamic loader included), and the libraries ldd could not find
// (a package's prebuilt addon for another C library, such as musl, which
// Node.js never loads on glibc). Files that are not ELF, or for another
// machine, are skipped.
func SharedLibraries(ctx context.Context, arch string, files []string) (found, missing []string, err error) {
	seen, gone := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		isELF, a, dynamic, err := elfInfo(f)
		if err != nil {
			return nil, nil, err
		}
		if !isELF || a != arch || !dynamic {
			continue
		}
		out, err := exec.CommandContext(ctx, "ldd", f).Output()
		if err != nil {
			return nil, nil, fmt.Errorf("ldd %s: %w", f, err)
		}
		libs, notFound := parseLDD(out)
		for _, l := range libs {
			seen[l] = true
		}
		for _, l := range notFound {
			gone[l] = true
		}
	}
	return sortedKeys(seen), sortedKeys(gone), nil
}

// parseLDD reads ldd's output: "name => /path (addr)", "/path (addr)" for
// the loader, "name => not found", and linux-vdso (no file).
func parseLDD(out []byte) (libs, notFound []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, target, arrow := strings.Cut(line, "=>")
		if !arrow {
			target = name
		}
		target = strings.TrimSpace(target)
		if target == "not found" {
			notFound = append(notFound, strings.TrimSpace(name))
			continue
		}
		p, _, _ := strings.Cut(target, " (")
		if filepath.IsAbs(p) {
			libs = append(libs, p)
		}
	}
	return libs, notFound
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
