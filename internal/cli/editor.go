package cli

// Editing in $EDITOR (`occ configurations edit`, `occ workspace edit`):
// the content goes to a temporary file (mode 0600), the editor runs on it,
// and what it left is read back. The file stays when the change could not
// be applied, so that an edit is never lost.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// defaultEditor runs when $EDITOR is unset.
const defaultEditor = "vi"

// editSession is one edit's temporary file.
type editSession struct {
	path string
}

// edit writes content to a temporary file named after pattern, runs the
// editor on it and returns what it holds afterwards; unchanged content is
// errNoChange (and the file is removed).
func (o *apiOptions) edit(pattern string, content []byte) ([]byte, *editSession, error) {
	f, err := os.CreateTemp("", pattern) // mode 0600
	if err != nil {
		return nil, nil, err
	}
	s := &editSession{path: f.Name()}
	if _, err := f.Write(content); err != nil {
		f.Close()
		s.done()
		return nil, nil, err
	}
	if err := f.Close(); err != nil {
		s.done()
		return nil, nil, err
	}
	getenv := o.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	editor := getenv("EDITOR")
	if editor == "" {
		editor = defaultEditor
	}
	// Through the shell, so that EDITOR may carry arguments ("code --wait").
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "occ-edit", s.path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, s, fmt.Errorf("the editor (%s) failed: %w; the file is %s", editor, err, s.path)
	}
	edited, err := os.ReadFile(s.path)
	if err != nil {
		return nil, s, err
	}
	if bytes.Equal(edited, content) {
		s.done()
		return nil, nil, errNoChange
	}
	return edited, s, nil
}

// done removes the temporary file.
func (s *editSession) done() { _ = os.Remove(s.path) }

// kept adds to err where the edit is kept.
func (s *editSession) kept(err error) error {
	return fmt.Errorf("%w\nyour edit is kept in %s", err, s.path)
}

// finishEdit reports an edit's end: "no changes" on standard error for an
// unchanged file, the error (with the kept file) otherwise.
func (o *apiOptions) finishEdit(s *editSession, err error) error {
	switch {
	case errors.Is(err, errNoChange):
		fmt.Fprintln(o.IO.ErrOut, "no changes")
		return nil
	case err != nil && s != nil:
		return s.kept(err)
	case s != nil:
		s.done()
	}
	return err
}
